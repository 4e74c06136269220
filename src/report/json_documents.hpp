#pragma once
// JSON documents that several reports embed (inside report/ only, where the JSON library lives).
#include <nlohmann/json.hpp>

#include "engine/training.hpp"

namespace ridgeline::report {

// What a job runs on, as every train and serve document opens: schema, model, chip, cluster, chips, stack.
[[nodiscard]] nlohmann::json job_document(const std::string& schema, const std::string& model, const ChipSpec& chip,
                                          const Cluster& cluster, const Stack& stack);

[[nodiscard]] nlohmann::json training_document(const TrainingScenario& scenario, const TrainingReport& report, double train_tokens);

}  // namespace ridgeline::report
