#include <iostream>

#include "app/serve.hpp"
#include "cli/commands.hpp"
#include "cli/emit_flags.hpp"
#include "cli/html_flag.hpp"
#include "cli/served_flags.hpp"
#include "cli/operations_flags.hpp"
#include "core/error.hpp"
#include "emit/emit.hpp"
#include "io/quantity_text.hpp"
#include "report/reports.hpp"
#include "scenario/serving_setup.hpp"

namespace ridgeline::cli {

void add_serve_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        ServedFlags served;
        std::string batch = "1";
        std::array<std::string, kServingKnobs.size()> dtypes;  // by row of kServingKnobs
        std::int64_t chips = 1, tp = 1, pp = 1, ep = 1, dp = 0;
        double requests_per_s = 0, acceptance = 0;
        std::int64_t draft_tokens = 0;
        // Under load: a closed loop of clients, an open loop at a rate, or a trace.
        std::int64_t concurrency = 0, requests = 1000;
        double request_rate = 0, slo_ttft_ms = 0, slo_tpot_ms = 0;
        std::string trace, engine = "vllm";
        bool json = false;
        HtmlTarget html;
        OperationsFlags power;
        EmitFlags emit;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* c = app.add_subcommand("serve", "time to first token, time per output token, throughput, KV-cache memory and cost of serving");
    add_served_flags(*c, f->served);
    c->add_option("--chips", f->chips, "chips in the deployment")->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}));
    c->add_option("--batch", f->batch, "sequences decoded together (whole deployment), or a range such as 1..512 for the latency-throughput curve")
        ->capture_default_str();
    for (std::size_t i = 0; i < kServingKnobs.size(); ++i) {
        const ServingKnob& knob = kServingKnobs[i];
        CLI::Option* option = c->add_option("--" + std::string(knob.flag), f->dtypes[i], knob.help);
        if (const auto dtype = serving_dtype(Plan{}, knob)) {
            f->dtypes[i] = dtype_name(*dtype);
            option->capture_default_str();
        }
    }
    c->add_option("--tp", f->tp, "tensor-parallel degree")->check(CLI::PositiveNumber);
    c->add_option("--pp", f->pp, "pipeline stages")->check(CLI::PositiveNumber);
    c->add_option("--draft-tokens", f->draft_tokens, "speculative decoding: tokens drafted per step by the model's prediction (MTP) modules")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{16}));
    c->add_option("--acceptance", f->acceptance, "speculative decoding: the chance each draft is accepted (with --draft-tokens)")
        ->check(CLI::Range(0.0, 1.0));
    c->add_option("--ep", f->ep, "expert-parallel degree (experts spread over data-parallel replicas)")->check(CLI::PositiveNumber);
    c->add_option("--dp", f->dp, "data-parallel replicas (default: what the chips leave)")->check(CLI::PositiveNumber);
    c->add_option("--requests-per-s", f->requests_per_s, "also split prefill and decode replicas for this traffic (disaggregated)")
        ->check(CLI::Range(1e-9, 1e12));
    auto* concurrency = c->add_option("--concurrency", f->concurrency,
                                      "simulate requests under load: this many clients, each sending when its last request ends")
                            ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}));
    auto* rate = c->add_option("--request-rate", f->request_rate, "simulate requests under load: Poisson arrivals at this many a second")
                     ->check(CLI::Range(1e-6, 1e7));
    auto* trace = c->add_option("--trace", f->trace, "simulate the requests of a trace (JSON Lines: ours or Mooncake's)");
    concurrency->excludes(rate)->excludes(trace);
    rate->excludes(trace);
    c->add_option("--requests", f->requests, "requests to simulate with --concurrency or --request-rate")
        ->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{100'000'000}));
    c->add_option("--slo-ttft-ms", f->slo_ttft_ms, "under load: goodput counts requests whose time to first token is within this")
        ->check(CLI::Range(1e-3, 1e9));
    c->add_option("--slo-tpot-ms", f->slo_tpot_ms, "under load: goodput counts requests whose time per output token is within this")
        ->check(CLI::Range(1e-3, 1e9));
    c->add_option("--engine", f->engine, "the serving engine's scheduler under load (engines/*.json; vllm-smaller-gpus on A100s and GPUs under 70 GiB)")->capture_default_str();
    c->add_flag("--json", f->json, "print one JSON document (schema ridgeline.serve/1)");
    add_emit_flags(*c, f->emit, EmitJob::serving, false);
    add_html_flag(*c, f->html, "with a --batch range, the latency-throughput curve and its critical batch");
    add_power_flags(*c, f->power);  // energy per million output tokens
    c->callback([f, c, &options] {
        const auto emit = emit_spec(*c, f->emit, f->json, options.data_dir);
        f->html.check();
        ServingSetup setup;
        const auto applied = load_served(setup, f->served, options.data_dir);
        setup.chips = f->chips;
        setup.plan.tp = f->tp;
        setup.plan.pp = f->pp;
        setup.plan.ep = f->ep;
        setup.plan.dp = f->dp;
        for (std::size_t i = 0; i < kServingKnobs.size(); ++i)
            if (!f->dtypes[i].empty()) set_serving_dtype(setup.plan, kServingKnobs[i], f->dtypes[i]);
        setup.input_len = f->served.input_len;
        setup.output_len = f->served.output_len;
        if (f->draft_tokens > 0) {
            if (c->count("--acceptance") == 0) throw InputError(kRequest, "acceptance", "--draft-tokens needs the acceptance rate");
            setup.speculative = {f->draft_tokens, f->acceptance};
        }
        app::ServeRequest request;
        request.batches = io::parse_count_range(f->batch, "--batch", 100'000'000);
        request.batches_text = f->batch;
        request.concurrency = f->concurrency;
        request.request_rate = f->request_rate;
        request.trace = f->trace;
        if (!request.under_load()) {
            for (const char* flag : {"--requests", "--engine", "--slo-ttft-ms", "--slo-tpot-ms"})
                if (c->count(flag) > 0) throw InputError(flag, "", "needs --concurrency, --request-rate or --trace");
        }
        if (f->concurrency > 0 && c->count("--batch") == 0) request.batches = {f->concurrency};
        request.requests = f->requests;
        request.slo_ttft_s = f->slo_ttft_ms * 1e-3;
        request.slo_tpot_s = f->slo_tpot_ms * 1e-3;
        if (c->count("--engine") > 0) request.engine = f->engine;
        request.requests_per_s = f->requests_per_s;
        request.power = operations_overrides(*c, f->power);
        request.data_dir = options.data_dir;
        request.setup = std::move(setup);
        const app::ServeOutcome outcome = app::serve(std::move(request));
        const ServingScenario& scenario = outcome.scenario;
        const ServingReport& report = outcome.report;
        const report::ServeExtras& extras = outcome.extras;
        const std::string json = f->json || f->html.wanted() ? report::serve_json(scenario, report, extras) : "";
        f->html.write(json);  // with --emit too: the configuration goes to stdout, the report to the page
        if (emit) {
            std::cout << emit_serving(*emit, scenario, report);
            return;
        }
        std::cout << with_settings(applied, f->json, f->json ? json : report::serve_table(scenario, report, extras)) << "\n";
    });
}

}  // namespace ridgeline::cli
