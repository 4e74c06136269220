#pragma once
// `search train` as a request in and a report out: one chip count (the top plans simulated in
// full), or a range of counts (each count's best plan, time and cost to train, the counts no other
// beats on both, the best under an objective). The CLI only parses flags into the request.
#include <cstdint>
#include <filesystem>
#include <functional>
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

// The chip counts a deadline search may answer with: the request's counts where it gives more than
// one, else every whole scale-up domain (a DGX node, an NVL72 rack) or, on a torus, every count
// of whole hosts a slice can be shaped from, up to the system's largest cluster (or 2^20 chips).
[[nodiscard]] std::vector<std::int64_t> deadline_candidates(const SearchTrainRequest& request);

// The fewest chips whose best plan trains `request.train_tokens` within `deadline_s` of wall-clock
// time (failures and checkpoints counted where the system says enough), among the counts searched:
// doubling from the fewest candidate until one meets it, then 1.25, 1.5 and 1.75 times the last
// that missed. The points are every count searched, in order of chips; chosen_chips the answer,
// or, when no count meets the deadline, the fastest count searched (and deadline_met false).
// `progress` hears of each count as it is done.
[[nodiscard]] report::ScalingOutcome search_train_deadline(const SearchTrainRequest& request, double deadline_s,
                                                           const std::function<void(const report::ScalingPoint&)>& progress);

}  // namespace ridgeline::app
