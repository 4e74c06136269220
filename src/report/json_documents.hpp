#pragma once
// JSON documents that several reports embed (inside report/ only, where the JSON library lives).
#include <nlohmann/json.hpp>

#include "engine/training.hpp"

namespace ridgeline::report {

[[nodiscard]] nlohmann::json training_document(const TrainingScenario& scenario, const TrainingReport& report, double train_tokens);

}  // namespace ridgeline::report
