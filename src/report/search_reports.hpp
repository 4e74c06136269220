#pragma once
// The faces of `ridgeline search train`: one chip count (top plans, rejections, Pareto front) or
// a range of chip counts (where strong scaling stops paying).
#include <optional>
#include <string>
#include <vector>

#include "engine/training.hpp"
#include "search/train_search.hpp"
#include "validation/compare_published.hpp"

namespace ridgeline::report {

struct PlanWithReport {
    SearchedPlan plan;
    TrainingScenario scenario;
    TrainingReport report;
};

struct TrainSearchOutcome {
    TrainSearchSpec spec;
    TrainSearchResult result;
    std::vector<PlanWithReport> top;  // the result's top plans, simulated in full
    double elapsed_s = 0;
    unsigned threads = 1;
    double train_tokens = 0;
};
[[nodiscard]] std::string train_search_table(const TrainSearchOutcome& outcome);
[[nodiscard]] std::string train_search_json(const TrainSearchOutcome& outcome);

// Every chip count's best plan; `on_front` marks the counts no larger count beats on the objective.
struct ScalingPoint {
    std::int64_t chips = 0;
    TrainSearchResult result;
    std::optional<PlanWithReport> best;
    double time_to_train_s = 0;
    std::optional<double> cost_usd;
    std::optional<double> goodput;  // where the system says enough about failures and storage
    double wall_s = 0;               // time to train with failures and checkpoints (steps alone without)
    bool on_front = false;
};
struct ScalingOutcome {
    std::string model_name, chip_name, objective;
    double train_tokens = 0;
    double elapsed_s = 0;
    std::vector<ScalingPoint> points;
    std::int64_t chosen_chips = 0;  // the best count under the objective (0: none fits)
    // A deadline search: the wall-clock limit, and whether chosen_chips meets it (else it is the
    // fastest count searched).
    std::optional<double> deadline_s;
    bool deadline_met = false;
};
[[nodiscard]] std::string scaling_table(const ScalingOutcome& outcome);
[[nodiscard]] std::string scaling_json(const ScalingOutcome& outcome);

// `validate --compare-published`: each record's rank among the search's plans, with a summary.
[[nodiscard]] std::string comparison_table(const std::vector<PublishedComparison>& comparisons);
[[nodiscard]] std::string comparison_json(const std::vector<PublishedComparison>& comparisons);

}  // namespace ridgeline::report
