#pragma once
// A plan as a framework's launch configuration (--emit): Megatron-Core arguments or a MaxText YAML
// override for training, vLLM arguments for serving, under the names of the framework's data file
// (emitters/*.json), with a header comment naming the model, the hardware, Ridgeline's version
// and the predicted figures. Pure: specs and reports in, text out.
#include <string>

#include "emit/emitter_spec.hpp"
#include "engine/training.hpp"
#include "inference/serving.hpp"
#include "spec/plan.hpp"

namespace ridgeline {

// The scenario's plan in the framework's settings. InputError (origin --emit, field the knob) where
// the framework cannot express a knob of the plan, or is a serving framework.
[[nodiscard]] std::string emit_training(const EmitterSpec& spec, const TrainingScenario& scenario, const TrainingReport& report);
// InputError the same way; and where the framework is a training framework.
[[nodiscard]] std::string emit_serving(const EmitterSpec& spec, const ServingScenario& scenario, const ServingReport& report);

}  // namespace ridgeline
