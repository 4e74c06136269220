#pragma once
// `train` as a request in and an outcome out: one plan priced step by step, with its interval from
// the held-out residuals and, given tokens to train, the run's time, cost, goodput and energy.
// The CLI only resolves flags, files and `--from` into the request and prints the outcome.
#include <filesystem>
#include <optional>
#include <string>

#include "engine/run_outlook.hpp"
#include "engine/training.hpp"
#include "scenario/training_setup.hpp"

namespace ridgeline::app {

struct TrainRequest {
    TrainingSetup setup;  // the global batch in sequences, unless batch_tokens is given
    // A batch in tokens, split into sequences of setup.seq_len; batch_field names it in errors
    // (the flag or file that gave it).
    std::optional<double> batch_tokens;
    std::string batch_field = "global_batch_tokens";
    double train_tokens = 0;         // > 0: also the run's outlook
    OperationsOverrides operations;  // over the system's, for the outlook
    std::filesystem::path data_dir;
};

struct TrainOutcome {
    TrainingScenario scenario;
    TrainingReport report;
    std::optional<RunOutlook> outlook;
};

// InputError naming batch_field when the batch is not a whole number of sequences, or the plan's
// own field when the plan does not fit the model and chips.
[[nodiscard]] TrainOutcome train(TrainRequest request);

}  // namespace ridgeline::app
