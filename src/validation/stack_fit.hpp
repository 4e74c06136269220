#pragma once
// Fitting a stack's free parameters (stacks/*.json "fitted") on published training runs, in
// process: the one fitter that `validate --cross-validate` refits with every source left out in
// turn, and that scripts/fit_stacks.py writes back from. Kernel efficiencies are never refitted.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/training.hpp"
#include "validation/validate.hpp"

namespace ridgeline {

// One training record built once; its step is re-priced for each trial of the stack's parameters.
struct FitCase {
    std::string id, source, stack, model;
    std::int64_t chips = 0;
    bool shards_on_measured_links = false;  // ZeRO-3 / FSDP traffic over links priced at measured shares
    double measured_tokens_per_s = 0;
    double tokens_per_step = 0;
    TrainingScenario scenario;
    // Base step times (no per-step cost, no stragglers) already priced, by (layer share, sharded share).
    std::map<std::pair<double, double>, double> base_step_s;
};

// Each fitted parameter by the name stack files, --hold and the fit's "fitted" list give it.
inline constexpr std::pair<const char*, double StackParams::*> kStackParamMembers[] = {
    {"per_step_overhead_s", &StackParams::per_step_overhead_s},
    {"layer_overhead_fraction", &StackParams::layer_overhead_fraction},
    {"rank_time_cv", &StackParams::rank_time_cv},
    {"sharded_comm_efficiency", &StackParams::sharded_comm_efficiency}};

// Whether the case's plan shards its parameters (ZeRO-3 / FSDP): the sharded share applies.
[[nodiscard]] bool shards_parameters(const FitCase& c);

// The predicted error (predicted / measured tokens/s - 1) of a case under `params`.
[[nodiscard]] double case_error(FitCase& c, const StackParams& params);

// What the fitter keeps to itself: which parameters it may move, and the result.
struct StackFit {
    StackParams params;
    std::vector<std::string> fitted;  // the parameters fitted (the rest keep the start's values)
    std::map<std::string, std::string> borrowed;  // of `fitted`, those taken from a wider fit: "family" or "pooled"
    int records = 0;
    int models = 0;
    int sharded_records = 0;  // whose plans shard the parameters (ZeRO-3 / FSDP), on any links
    std::vector<std::string> series;  // sources whose records form a scaling series (rank_time_cv's)
    ErrorSummary in_sample;
};

// The same rules as the shipped fits: at least 5 records, a per-step cost only across 3 or more
// models whose step lengths tell it from a per-layer share (stack_fit.cpp), rank_time_cv on scaling
// series (a source on 3 or more chip counts), the sharded share only where at least 5 records shard
// over measured links; coordinate descent on median + 0.5 x p90 |error|.
inline constexpr int kMinFitRecords = 5;
// `disabled`: parameter names left at the start's values.
[[nodiscard]] StackFit fit_stack(const std::vector<FitCase*>& cases, const StackParams& start,
                                 const std::set<std::string>& disabled = {});

// The training records of `records` that a stack fit can use (chips with measured kernels, a
// stack file for the framework), built once; the others with the reason.
struct FitCases {
    std::vector<FitCase> cases;
    std::vector<RecordResult> skipped;
};
[[nodiscard]] FitCases build_fit_cases(const std::vector<RunRecord>& records, const std::filesystem::path& data_dir);

}  // namespace ridgeline
