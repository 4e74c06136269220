#include <iostream>

#include "app/search_serve.hpp"
#include "cli/commands.hpp"
#include "cli/emit_flags.hpp"
#include "cli/html_flag.hpp"
#include "cli/served_flags.hpp"
#include "core/error.hpp"
#include "emit/emit.hpp"
#include "io/quantity_text.hpp"
#include "report/reports.hpp"
#include "scenario/serving_setup.hpp"

namespace ridgeline::cli {

void add_search_serve_command(CLI::App& search, const GlobalOptions& options) {
    struct Flags {
        ServedFlags served;
        std::string chips = "1..64", objective = "cost";
        double slo_ttft_ms = 0, slo_tpot_ms = 0;
        std::size_t top = 10;
        std::int64_t max_batch = 512;
        bool json = false;
        HtmlTarget html;
        EmitFlags emit;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* c = search.add_subcommand("serve", "the cheapest (or fastest) serving configurations that meet latency SLOs, and the Pareto front");
    add_served_flags(*c, f->served);
    c->add_option("--chips", f->chips, "chip count, or a range such as 8..64 (powers of two in it)")->capture_default_str();
    c->add_option("--slo-ttft-ms", f->slo_ttft_ms, "time-to-first-token limit in milliseconds")->required()->check(CLI::Range(1e-6, 1e9));
    c->add_option("--slo-tpot-ms", f->slo_tpot_ms, "time-per-output-token limit in milliseconds")->required()->check(CLI::Range(1e-6, 1e9));
    c->add_option("--objective", f->objective, "cost (per million output tokens) or throughput (tokens/s per chip)")
        ->capture_default_str()->check(CLI::IsMember({"cost", "throughput"}));
    c->add_option("--top", f->top, "configurations to list")->capture_default_str()->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
    c->add_option("--max-batch", f->max_batch, "largest batch per replica to try (powers of two up to it)")
        ->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{65536}));
    c->add_flag("--json", f->json, "print one JSON document (schema ridgeline.serve-search/1)");
    add_emit_flags(*c, f->emit, EmitJob::serving, true);
    add_html_flag(*c, f->html, "the Pareto front meeting the SLO, the chosen configuration");
    c->callback([f, c, &options] {
        const auto emit = emit_spec(*c, f->emit, f->json, options.data_dir);
        f->html.check();
        ServeSearchSpace space;
        const auto applied = load_served(space, f->served, options.data_dir);
        space.chip_counts = io::parse_count_range(f->chips, "--chips", 1'000'000, kMaxChipCounts);
        space.input_len = f->served.input_len;
        space.output_len = f->served.output_len;
        space.slo_ttft_s = f->slo_ttft_ms / 1e3;
        space.slo_tpot_s = f->slo_tpot_ms / 1e3;
        space.objective = f->objective == "cost" ? ServeObjective::cost : ServeObjective::throughput;
        space.top_k = emit ? std::max(f->top, f->emit.top) : f->top;
        space.max_batch_per_replica = f->max_batch;
        const app::SearchServeOutcome outcome = app::search_serve({space, options.data_dir});
        const ServeSearchResult& result = outcome.result;
        f->html.write(f->html.wanted() ? report::serve_search_json(space, result, outcome.best_intervals) : "");  // with --emit too
        if (emit) {
            // Each configuration simulated again in full, for its figures.
            if (result.best.empty()) throw InputError("--emit", "", "no configuration meets the SLOs: there is nothing to write");
            for (std::size_t i = 0; i < std::min(f->emit.top, result.best.size()); ++i) {
                const ServingScenario scenario = app::candidate_scenario(space, result.best[i]);
                std::cout << (i == 0 ? "" : "\n") << emit_serving(*emit, scenario, simulate_serving(scenario));
            }
            return;
        }
        const std::string json = f->json ? report::serve_search_json(space, result, outcome.best_intervals) : "";
        std::cout << with_settings(applied, f->json, f->json ? json : report::serve_search_table(space, result, outcome.best_intervals)) << "\n";
    });
}

}  // namespace ridgeline::cli
