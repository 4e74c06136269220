#include <iostream>

#include "model/plausible_sizes.hpp"
#include "cli/commands.hpp"
#include "model/model_catalog.hpp"
#include "engine/model_summary.hpp"
#include "model/recompute_catalog.hpp"
#include "report/reports.hpp"

namespace ridgeline::cli {

void add_model_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        std::string model;
        double seq_len = 8192;
        bool json = false;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = app.add_subcommand(
        "model", "parameters, FLOPs per token, KV cache and activation memory of a model");
    command->add_option("model", flags->model, "model name (see `ridgeline models`), model file or HF config.json")
        ->required();
    command->add_option("--seq-len", flags->seq_len, "sequence length for attention FLOPs, KV and activations")
        ->check(CLI::Range(1.0, kMaxSequenceTokens));
    command->add_flag("--json", flags->json, "print one JSON document (schema ridgeline.model/1)");
    command->callback([flags, &options] {
        const ModelSpec model = resolve_model(flags->model, options.data_dir);
        const ModelSummary summary = summarize_model(model, flags->seq_len, recompute_policies(options.data_dir, false));
        std::cout << (flags->json ? report::model_json(model, summary) : report::model_table(model, summary)) << "\n";
    });
}

}  // namespace ridgeline::cli
