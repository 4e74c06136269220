#include "cli/batch_flags.hpp"

#include "model/plausible_sizes.hpp"

namespace ridgeline::cli {

void add_batch_flags(CLI::App& command, BatchFlags& flags) {
    command.add_option("--seq-len", flags.seq_len, "tokens per sequence")->capture_default_str()->check(CLI::Range(1.0, kMaxSequenceTokens));
    command.add_option("--global-batch-tokens", flags.global_batch_tokens, "tokens per optimizer step")->check(CLI::Range(1.0, kMaxBatchTokens));
    command.add_option("--global-batch-seqs", flags.global_batch_seqs, "sequences per optimizer step")
        ->check(CLI::Range(1.0, kMaxBatchSequences))
        ->excludes("--global-batch-tokens");  // the same batch twice: which would win is a guess
}

}  // namespace ridgeline::cli
