#pragma once
// --seq-len, --global-batch-tokens | --global-batch-seqs: a training job's batch, on train and
// search train.
#include <CLI/CLI.hpp>

namespace ridgeline::cli {

struct BatchFlags {
    double seq_len = 8192, global_batch_tokens = 0, global_batch_seqs = 0;
};

void add_batch_flags(CLI::App& command, BatchFlags& flags);

}  // namespace ridgeline::cli
