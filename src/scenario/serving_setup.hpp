#pragma once
// From the degrees people write for a deployment (tp, pp, ep, dp, dtypes, batch) to the scenario
// the serving engine takes: the cluster of its chips and the mesh laid on it. Shared by `serve`,
// `search serve` and `validate`.
#include <filesystem>
#include <string>

#include "hardware/system.hpp"
#include "inference/serving.hpp"

namespace ridgeline {

struct ServingSetup : ServedModel {
    std::int64_t chips = 0;
    Plan plan;  // dp = 0: what the chips leave
    double batch_seqs = 1;
    double input_len = 0;
    double output_len = 0;
    SpeculativeDecoding speculative;
};

// The model, the hardware, the serving strategy and the stack by name or file (catalog lookups;
// an empty stack: the chip's serving default).
[[nodiscard]] ServedModel load_served_model(const std::string& model, const std::string& hardware,
                                            const std::filesystem::path& data_dir, const std::string& stack = "");

// InputError naming the flag when the degrees do not multiply to the chips or do not divide the model.
[[nodiscard]] ServingScenario build_serving_scenario(const ServingSetup& setup);

// "bf16", "fp8", ... restricted to what serving stores weights or KV caches in (InputError naming `flag`).
[[nodiscard]] Dtype parse_serving_dtype(const std::string& text, const std::string& flag, bool kv_cache);

}  // namespace ridgeline
