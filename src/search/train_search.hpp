#pragma once
// The parallelism search for training: every plan of a model on a cluster — the chips factored
// over data, fsdp, tensor, pipeline, context and expert axes, those axes placed on the topology in
// every order, micro-batch sizes, pipeline schedules and virtual stages, recomputation, ZeRO
// stages, optimizer offload and overlap — each either rejected for a typed reason or costed by the
// two-stage step model. Memory is checked before time; the best plans and the Pareto front of step
// time vs memory per chip are kept as they stream by, so memory use does not grow with the space.
// Pure: the strategies come in a library the caller loaded.
#include <array>
#include <functional>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenario/training_setup.hpp"
#include "core/streaming.hpp"
#include "spec/plan_knobs.hpp"

namespace ridgeline {

// What a search keeps as given: the degrees, and the knobs given (spec/plan_knobs: a knob the table
// marks searched is tried at every value when not given; a fixed one keeps Plan's default).
struct SearchConstraints : GivenDegrees, GivenKnobs {
    std::vector<RecomputePolicy> recompute_policies;  // those searched (the CLI: recompute/*.json's default set); empty: none
};

struct TrainSearchSpec : TrainingJob {
    Dtype precision = Dtype::bf16;
    SearchConstraints fixed;
    std::map<std::string, Strategy> strategies;  // by name (see strategies_needed)
    std::size_t top_k = 10;
    unsigned threads = 0;  // 0: all cores
    std::optional<double> reference_step_time_s;  // count the valid plans faster than this
    // Told now and then (from one thread) of the share of the space done and the plans so far.
    std::function<void(double share, std::uint64_t plans)> progress;
};

// The strategy names a search may ask the library for.
[[nodiscard]] std::vector<std::string> strategies_needed(const SearchConstraints& fixed);

// A plan of the space and what it costs. The plan is the one `train` takes (same numbers when
// simulated).
struct SearchedPlan : Plan {
    double microbatches = 1;
    double step_time_s = 0;
    double memory_bytes = 0;
    std::uint64_t ordinal = 0;                 // position in the enumeration: ties go to the earlier plan
    std::uint32_t other_orders = 0;            // the same plan in other axis orders, costing the same (top K only)
    [[nodiscard]] Rank rank() const { return {step_time_s, memory_bytes, 0, ordinal}; }
    [[nodiscard]] double x() const { return memory_bytes; }  // the front: memory against step time
    [[nodiscard]] double y() const { return step_time_s; }
};

struct TrainSearchResult {
    std::uint64_t plans_evaluated = 0;  // every plan of the space, each rejected or costed
    std::uint64_t plans_costed = 0;     // step time computed (the valid ones)
    std::array<std::uint64_t, kRejections> rejected{};
    // For the kinds decided by an input error (strategy_dims, placement): the error of the first
    // such plan in the enumeration, so that the reason is not lost.
    struct Example {
        std::uint64_t ordinal = 0;
        std::string reason;
    };
    std::array<Example, kRejections> examples{};
    void keep_example(Rejection why, std::uint64_t ordinal, const std::string& reason) {
        Example& e = examples[static_cast<std::size_t>(why)];
        if (e.reason.empty() || ordinal < e.ordinal) e = {ordinal, reason};
    }
    std::vector<SearchedPlan> top;      // best (shortest step) first
    std::vector<SearchedPlan> pareto;   // step time vs memory per chip, by memory ascending
    std::uint64_t plans_faster_than_reference = 0;
    [[nodiscard]] std::uint64_t plans_valid() const { return plans_costed; }
};

// InputError naming the flag when a fixed knob contradicts the chips, the model or the batch, or
// when the batch is smaller than every plan's data-parallel degree. An empty valid space is not an
// error: the rejection counts say why.
[[nodiscard]] TrainSearchResult search_training(const TrainSearchSpec& spec);

// The worker threads a search runs: those asked for (0: one a core), at most one a core.
[[nodiscard]] unsigned search_threads(unsigned requested);

}  // namespace ridgeline
