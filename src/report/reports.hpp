#pragma once
// The two faces of each report: a readable table and a JSON document naming its schema.
// Returned as text so that the JSON library stays inside report/.
#include <map>
#include <optional>
#include <string>

#include "engine/layer_ops.hpp"
#include "engine/roofline.hpp"
#include "collective/collective.hpp"
#include "engine/run_outlook.hpp"
#include "engine/training.hpp"
#include "inference/load.hpp"
#include "inference/serve_search.hpp"
#include "inference/serving.hpp"
#include "validation/validate.hpp"
#include "topology/topology_summary.hpp"
#include "hardware/system.hpp"
#include "model/model_spec.hpp"
#include "engine/model_summary.hpp"
#include "io/catalog_lookup.hpp"

namespace ridgeline {
struct CrossValidation;
}  // namespace ridgeline

namespace ridgeline::report {

[[nodiscard]] std::string model_table(const ModelSpec& model, const ModelSummary& summary);
[[nodiscard]] std::string model_json(const ModelSpec& model, const ModelSummary& summary);

[[nodiscard]] std::string ridge_table(const Hardware& hardware, const std::vector<RidgePoint>& points);
[[nodiscard]] std::string ridge_json(const Hardware& hardware, const std::vector<RidgePoint>& points);

struct MatmulQuery {
    MatmulShape shape;
    MatmulDtypes dtypes;
    RooflineTime time;
    double critical_batch_tokens = 0;
    std::optional<RooflineTime> predicted;  // the chip's measured kernel model
    std::string predicted_note;         // why there is no prediction, or where it comes from
};
[[nodiscard]] std::string matmul_table(const Hardware& hardware, const MatmulQuery& query);
[[nodiscard]] std::string matmul_json(const Hardware& hardware, const MatmulQuery& query);

struct LayerQuery {
    std::string model_name;
    LayerWorkload workload;
    Dtype compute = Dtype::bf16;
    LayerRoofline layer;
    std::string stack;         // what picks the kernels for the predicted times
    std::string kernels_note;  // where the predicted times come from, or why there are none
};
[[nodiscard]] std::string layer_table(const Hardware& hardware, const LayerQuery& query);
[[nodiscard]] std::string layer_json(const Hardware& hardware, const LayerQuery& query);

[[nodiscard]] std::string topology_table(const TopologySummary& summary);
[[nodiscard]] std::string topology_json(const TopologySummary& summary);

struct CollectiveQuery {
    std::vector<std::string> axes;
    CollectiveOptions options;
    CollectiveCost cost;
};
[[nodiscard]] std::string collective_table(const Cluster& cluster, const CollectiveQuery& query);
[[nodiscard]] std::string collective_json(const Cluster& cluster, const CollectiveQuery& query);

// train_tokens > 0 adds the time (and cost) to train that many tokens.
[[nodiscard]] std::string training_table(const TrainingScenario& scenario, const TrainingReport& report, double train_tokens);
[[nodiscard]] std::string training_json(const TrainingScenario& scenario, const TrainingReport& report, double train_tokens);
// With --train-tokens: the run's wall-clock time with failures and checkpoints, and its energy.
[[nodiscard]] std::string outlook_table(const TrainingScenario& scenario, const RunOutlook& outlook);
[[nodiscard]] std::string training_outlook_json(const TrainingScenario& scenario, const TrainingReport& report, const RunOutlook& outlook);

// A serving what-if, with the latency-throughput curve and a disaggregated split when asked for.
struct ServeEnergy {
    double kernel_share = 0;            // of a batch's life
    std::optional<EnergyReport> energy;  // per second of serving at the report's throughput
    EnergyNotes notes;                   // what it assumed, or what is missing
};
struct ServeExtras {
    std::optional<ServingCurve> curve;
    std::optional<Disaggregation> disaggregation;
    double requests_per_s = 0;  // the traffic a split was asked for (none is made where the deployment does not fit)
    std::optional<ServeEnergy> energy;
    std::optional<LoadReport> load;  // requests simulated under load, and the scheduler that ran them
    std::optional<SchedulerSpec> engine;
    // The output tokens/s's prediction interval, from held-out serving runs like it (factors on the
    // time per token: measured / predicted); none asked for where why_none is empty too.
    PredictionInterval interval;
    // Under load, a latency statistic's ("ttft_mean", "itl_p50", ...) interval where published runs
    // measured that statistic.
    std::map<std::string, PredictionInterval> latency_intervals;
};
[[nodiscard]] std::string serve_table(const ServingScenario& scenario, const ServingReport& report, const ServeExtras& extras);
[[nodiscard]] std::string serve_json(const ServingScenario& scenario, const ServingReport& report, const ServeExtras& extras);

// `best_intervals`: one per result.best (its output tokens/s's), or none.
[[nodiscard]] std::string serve_search_table(const ServeSearchSpace& space, const ServeSearchResult& result,
                                             const std::vector<PredictionInterval>& best_intervals = {});
[[nodiscard]] std::string serve_search_json(const ServeSearchSpace& space, const ServeSearchResult& result,
                                            const std::vector<PredictionInterval>& best_intervals = {});

[[nodiscard]] std::string validation_table(const ValidationResult& result);
// With `cv`, the JSON gains its "cross_validation" section.
[[nodiscard]] std::string validation_json(const ValidationResult& result, const CrossValidation* cv = nullptr);
[[nodiscard]] std::string cross_validation_table(const CrossValidation& cv);
// The held-out residuals that train, serve and the searches draw their intervals from (ridgeline.residuals/1).
[[nodiscard]] std::string residuals_file_json(const CrossValidation& cv, const std::string& origin);

// Named groups of catalog entries ("systems", "chips", "models") for the listing commands.
struct CatalogGroup {
    std::string kind;
    std::vector<CatalogEntry> entries;
};
[[nodiscard]] std::string catalog_table(const std::vector<CatalogGroup>& groups);
[[nodiscard]] std::string catalog_json(const std::string& schema, const std::vector<CatalogGroup>& groups);

}  // namespace ridgeline::report
