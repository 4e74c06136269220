#pragma once
// `search train` as a request in and a report out: one chip count (the top plans simulated in
// full), or a range of counts (each count's best plan, time and cost to train, the counts no other
// beats on both, the best under an objective). The CLI only parses flags into the request.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "engine/run_outlook.hpp"
#include "report/search_reports.hpp"

namespace ridgeline::app {

// goodput: the shortest wall-clock time once failures and checkpoints count.
enum class ScalingObjective { time, cost, mfu, goodput };
[[nodiscard]] const char* objective_name(ScalingObjective objective);

struct SearchTrainRequest {
    TrainSearchSpec spec;            // all but the cluster and the global batch, which follow the chip count
    Hardware hardware;
    std::optional<Cluster> topology;  // a custom topology instead of the hardware's cluster
    std::vector<std::int64_t> chip_counts;
    std::int64_t domains = 0;         // scale-out domains; 0: derived
    std::optional<double> global_batch_seqs, global_batch_tokens;  // neither: one sequence per chip
    ScalingObjective objective = ScalingObjective::time;
    double train_tokens = 0;
    OperationsOverrides operations;  // over the system's, for goodput
    std::filesystem::path data_dir;  // strategy files for the top plans' full reports
};

// InputError naming the request's field (chips, global_batch_tokens, ...) when it cannot be searched.
[[nodiscard]] report::TrainSearchOutcome search_train(const SearchTrainRequest& request, std::int64_t chips);
[[nodiscard]] report::ScalingOutcome search_train_scaling(const SearchTrainRequest& request);

}  // namespace ridgeline::app
