#pragma once
// JSON documents that several reports embed (inside report/ only, where the JSON library lives).
#include <nlohmann/json.hpp>

#include "engine/training.hpp"

namespace ridgeline::report {

// What a job runs on, as every train and serve document opens: schema, model, chip, cluster, chips, stack.
[[nodiscard]] nlohmann::json job_document(const std::string& schema, const std::string& model, const ChipSpec& chip,
                                          const Cluster& cluster, const Stack& stack);

// A deployment's plan: its degrees and its dtypes (kServingKnobs; an unset optional one left out).
[[nodiscard]] nlohmann::json serving_plan_json(const Plan& plan);

[[nodiscard]] nlohmann::json training_document(const TrainingScenario& scenario, const TrainingReport& report, double train_tokens);

}  // namespace ridgeline::report
