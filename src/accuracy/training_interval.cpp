#include "accuracy/training_interval.hpp"

namespace ridgeline {

RunKind training_run_kind(const TrainingJob& job) {
    return {job.stack.family, chip_family(job.chip.name), job.model.moe.has_value(), job.cluster.chips(), job.stack.fitted_from};
}

PredictionInterval training_interval(const std::vector<Residual>& residuals, const TrainingJob& job) {
    return prediction_interval(residuals, training_run_kind(job));
}

}  // namespace ridgeline
