#pragma once
// From the degrees people write for a deployment (tp, pp, ep, dp, dtypes, batch) to the scenario
// the serving engine takes: the cluster of its chips and the mesh laid on it. Shared by `serve`,
// `search serve` and `validate`.
#include <filesystem>
#include <string>

#include "hardware/system.hpp"
#include "inference/serving.hpp"
#include "spec/serving_knobs.hpp"

namespace ridgeline {

struct ServingSetup : ServedModel, ServingLoad {
    std::int64_t chips = 0;
    Plan plan;  // dp = 0: what the chips leave
};

// The model, the hardware, the serving strategy and the stack by name or file (catalog lookups;
// an empty stack: the chip's serving default).
[[nodiscard]] ServedModel load_served_model(const std::string& model, const std::string& hardware,
                                            const std::filesystem::path& data_dir, const std::string& stack = "");

// InputError naming the flag when the degrees do not multiply to the chips or do not divide the model.
[[nodiscard]] ServingScenario build_serving_scenario(const ServingSetup& setup);

// Sets the row's dtype from its name: one of the row's choices (InputError naming its flag).
void set_serving_dtype(Plan& plan, const ServingKnob& knob, const std::string& text);

}  // namespace ridgeline
