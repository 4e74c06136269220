#pragma once
// What makes two training runs alike for their prediction errors: the stack family that ran them,
// the chip family, dense or MoE, the scale, and whether the stack's parameters were its own or the
// pooled fit of other stacks. Cross-validation slices by these; intervals are drawn from them.
#include <cstdint>
#include <string>
#include <vector>

namespace ridgeline {

struct RunKind {
    std::string stack_family;  // stacks/*.json "family" (Megatron-Core, NeMo and Megatron-LM are one)
    std::string chip_family;   // chip_family()
    bool moe = false;
    std::int64_t chips = 0;
    // How the stack's parameters were fitted: on its "own" records, or, with none, the pooled fit of
    // its "family"'s other stacks or of all stacks ("pooled"); "none": nothing is fitted on such
    // runs (serving), so every prediction is held out as it stands.
    std::string params = "own";
};

// One held-out prediction: its run, and predicted / measured - 1 with the run's source left out, of
// tokens/s ("throughput") or of a serving latency's statistic ("ttft_mean", "itl_p50", ...).
struct Residual {
    std::string id, source;
    RunKind kind;
    double error = 0;
    std::string quantity = "throughput";
};

// "hopper", "ampere", "blackwell", "tpu", "cdna3", ... from a chip name; the name itself otherwise.
[[nodiscard]] std::string chip_family(const std::string& chip_name);
// A serving run's kind: the engine whose scheduler ran its requests ("" for the static model), its
// chips; nothing is fitted on serving runs.
[[nodiscard]] RunKind serving_run_kind(const std::string& engine, const std::string& chip_name, bool moe, std::int64_t chips);
// "1-64", "65-512" or "513+" chips.
[[nodiscard]] std::string scale_bucket(std::int64_t chips);

// A prediction interval as factors on the predicted step time (measured / predicted), from the
// residuals of `quantity` of runs like `kind`, relaxing the likeness (scale, then stack family,
// then chip family) until enough remain for the level: at least kMinLikeRuns, and as many as the
// extreme ranks need to hold it (19 at 90%). None where even the loosest has fewer.
inline constexpr int kMinLikeRuns = 5;
[[nodiscard]] int like_runs_needed(double level);
struct PredictionInterval {
    bool available = false;
    double level = 0.9;
    double low_factor = 1, high_factor = 1;  // on the step time: measured / predicted
    int runs = 0;                            // held-out runs it comes from
    std::string like;                        // what they share with the query ("hopper, dense, megatron, 65-512 chips")
    std::string why_none;                    // when not available
};
// Residuals left out of an interval, for checking intervals on the runs they were drawn from: the
// run itself (by id), or its whole source.
struct LeaveOut {
    std::string id, source;
    [[nodiscard]] bool drops(const Residual& r) const { return (!id.empty() && r.id == id) || (!source.empty() && r.source == source); }
};
[[nodiscard]] PredictionInterval prediction_interval(const std::vector<Residual>& residuals, const RunKind& kind, double level = 0.9,
                                                     const LeaveOut& leave_out = {}, const std::string& quantity = "throughput");

}  // namespace ridgeline
