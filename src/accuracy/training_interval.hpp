#pragma once
// The prediction interval of a training step: from the held-out residuals of runs like the job.
#include <vector>

#include "accuracy/like_runs.hpp"
#include "engine/training.hpp"

namespace ridgeline {

// The job as the residuals describe runs: its stack's family and whether that stack's parameters
// are the pooled fit (it had no records of its own), its chip family, dense or MoE, its chips.
[[nodiscard]] RunKind training_run_kind(const TrainingJob& job);
[[nodiscard]] PredictionInterval training_interval(const std::vector<Residual>& residuals, const TrainingJob& job);

}  // namespace ridgeline
