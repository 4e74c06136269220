#pragma once
// The steps of a calibration run and their execution under a time budget. After every step the
// measurements so far go to `save`, so an interrupted run keeps everything it measured.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "calibration/backend.hpp"
#include "calibration/measurements.hpp"

namespace ridgeline::calibration {

struct SweepPlan {
    std::vector<std::array<std::int64_t, 3>> gemms;  // m, k, n for fitting
    std::vector<KernelGemmSample> tensor_gemms;      // dtype, m, k, n: a kernel model's GEMMs
    std::vector<double> copy_bytes;
    std::vector<std::pair<CollectiveKind, double>> collectives;  // kind, bytes
    std::vector<ShardedCase> holdout;                // shapes and device counts not used for fitting
    // Passes over all steps while the budget lasts, each sample keeping its fastest: a shared host
    // slows down in phases longer than one step's repetitions, and spreading a step's passes over
    // the run steps around them.
    int passes = 10;
};

// `small`: dimensions and sizes divided by about four, for short runs (tests, sanitizer builds).
// `tensor_dtypes`: the backend's tensor-core GEMM dtypes, each timed at LLM shapes.
[[nodiscard]] SweepPlan make_plan(int devices, bool validate, bool small, const std::vector<Dtype>& tensor_dtypes = {});

struct StepReport {
    int index = 0;  // 1-based
    int count = 0;
    std::string what;
    double left_s = 0;  // of the time budget
};

struct SweepOutcome {
    Measurements measurements;
    int skipped = 0;  // steps left out of the first pass when the budget ran out
    int passes = 0;   // passes completed within the budget
};

// Steps interleave GEMMs, copies, collectives and held-out cases; once the budget is spent the rest
// are skipped (later passes end early instead).
[[nodiscard]] SweepOutcome run_sweep(Backend& backend, const SweepPlan& plan, const Provenance& provenance,
                                     double budget_s, const std::function<void(const StepReport&)>& progress,
                                     const std::function<void(const Measurements&)>& save);

}  // namespace ridgeline::calibration
