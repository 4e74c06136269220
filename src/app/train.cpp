#include "app/train.hpp"

#include <cmath>
#include <cstdint>
#include <utility>

#include "accuracy/residuals_file.hpp"
#include "accuracy/training_interval.hpp"
#include "core/error.hpp"
#include "spec/plan_check.hpp"

namespace ridgeline::app {

TrainOutcome train(TrainRequest request) {
    TrainingSetup& setup = request.setup;
    if (request.batch_tokens) {
        const auto sequences = batch_sequences(*request.batch_tokens, setup.seq_len);
        if (!sequences)
            throw InputError(request.batch_field, "", "a batch of " + std::to_string(static_cast<std::int64_t>(*request.batch_tokens)) +
                                                          " tokens is not a whole number of sequences of length " +
                                                          std::to_string(static_cast<std::int64_t>(setup.seq_len)));
        setup.global_batch_seqs = *sequences;
    }
    if (setup.global_batch_seqs != std::floor(setup.global_batch_seqs))
        throw InputError("--global-batch-seqs", "", "not a whole number of sequences");
    PricedTraining priced = price_training(setup, request.data_dir, "plan");
    TrainOutcome out{std::move(priced.scenario), std::move(priced.report), {}};
    out.report.interval = training_interval(load_residuals(residuals_path(request.data_dir)), out.scenario);
    if (request.train_tokens > 0)
        out.outlook = run_outlook(out.scenario, out.report, setup.hardware, request.train_tokens, request.operations);
    return out;
}

}  // namespace ridgeline::app
