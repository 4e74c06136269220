#include <chrono>
#include <iostream>

#include "model/plausible_sizes.hpp"
#include "model/recompute_catalog.hpp"
#include "app/search_train.hpp"
#include "cli/commands.hpp"
#include "cli/batch_flags.hpp"
#include "cli/emit_flags.hpp"
#include "cli/from_flags.hpp"
#include "cli/html_flag.hpp"
#include "cli/interrupt.hpp"
#include "cli/operations_flags.hpp"
#include "cli/plan_flags.hpp"
#include "cli/progress.hpp"
#include "cli/switches.hpp"
#include "cli/what_if.hpp"
#include "stack/stack_file.hpp"
#include "core/error.hpp"
#include "emit/emit.hpp"
#include "emit/frameworks.hpp"
#include "from/launch_config.hpp"
#include "hardware/catalog.hpp"
#include "io/quantity_text.hpp"
#include "model/model_catalog.hpp"
#include "report/search_reports.hpp"
#include "report/table.hpp"
#include "sharding/strategy_file.hpp"
#include "topology/topology_file.hpp"

namespace ridgeline::cli {

namespace {

struct Flags {
    std::string model, hardware, chips, topology, objective = "time";
    std::int64_t nodes = 0;
    BatchFlags batch;
    double train_tokens = 1e12, deadline_days = 0;
    std::size_t top = 5;
    unsigned threads = 0;
    double time_limit_s = 600;
    bool json = false, progress = false;
    HtmlTarget html;
    OperationsFlags operations;
    WhatIfFlags what_if;
    // Fixed knobs (searched when not given).
    Degrees degrees;
    PlanFlags plan;
    std::string stack;
    EmitFlags emit;
    FromFlags from;
};

template <typename T>
std::optional<T> given_value(const CLI::App* c, const char* flag, T value) {
    return c->count(flag) > 0 ? std::optional<T>(value) : std::nullopt;
}

constexpr std::size_t kEmitCandidates = 32;

// The configurations of the `count` best plans the framework can express, best first; plans it
// cannot (a knob it lacks) are passed over and named in a comment above the first one written.
std::string emit_plans(const EmitterSpec& spec, const std::vector<report::PlanWithReport>& plans, std::size_t count) {
    if (plans.empty()) throw InputError("--emit", "", "no plan of the search fits: there is nothing to write");
    std::string text, skipped;
    std::optional<InputError> first_refusal;
    std::size_t written = 0;
    for (std::size_t i = 0; i < plans.size() && written < count; ++i) {
        try {
            text += (written == 0 ? "" : "\n") + emit_training(spec, plans[i].scenario, plans[i].report);
            ++written;
        } catch (const InputError& refusal) {
            skipped += "# passed over: the search's plan #" + std::to_string(i + 1) + " (" + refusal.field() + ": " + refusal.detail() + ")\n";
            if (!first_refusal) first_refusal = refusal;
        }
    }
    if (written == 0)
        throw InputError("--emit", first_refusal->field(), "none of the search's " + std::to_string(plans.size()) + " best plans can be written for " +
                                                                spec.name + "; the best: " + first_refusal->detail() +
                                                                " (fix that knob with its flag to search only plans " + spec.name + " can run)");
    return skipped + text;
}

// Across chip counts: the chosen count's best plan.
std::string emit_chosen(const EmitterSpec& spec, const report::ScalingOutcome& outcome, std::size_t count) {
    if (count > 1) throw InputError("--emit-top", "", "across chip counts only the chosen count's best plan is written: give one --chips count");
    for (const report::ScalingPoint& point : outcome.points)
        if (point.chips == outcome.chosen_chips && point.best) return emit_plans(spec, {*point.best}, 1);
    return emit_plans(spec, {}, 1);
}

// The flags given override `k` (what a --from file fixes, or nothing).
SearchConstraints constraints(const Flags& f, const CLI::App* c, SearchConstraints k, const std::filesystem::path& data_dir) {
    for (const DegreeField& d : kDegreeFields)
        if (const auto v = given_value(c, ("--" + std::string(d.key)).c_str(), f.degrees.*d.value)) k.*d.given = v;
    apply_plan_flags(*c, f.plan, k, data_dir);
    return k;
}

}  // namespace

void add_search_train_command(CLI::App& search, const GlobalOptions& options) {
    auto f = std::make_shared<Flags>();
    CLI::App* c = search.add_subcommand("train", "every training plan of a model on a cluster: the best, the Pareto front, and why the rest lost");
    c->add_option("--model", f->model, "model name, model file or HF config.json")->required();
    c->add_option("--hardware", f->hardware, "system or chip (required unless --topology gives it)");
    c->add_option("--chips", f->chips, "chips, or a range such as 256..8192 (each power of two) or 4096..8192:512 (every 512th)");
    c->add_option("--deadline-days", f->deadline_days,
                  "with --train-tokens: the fewest chips (whole nodes or racks, or the --chips range) that finish within this many days "
                  "of wall-clock time")
        ->check(CLI::Range(1e-3, 1e5));
    add_progress_flag(*c, f->progress);
    c->add_option("--topology", f->topology, "a custom topology file (ridgeline.topology/1) instead of --hardware");
    c->add_option("--nodes", f->nodes, "scale-out domains (DGX nodes, TPU slices); default derived");
    add_batch_flags(*c, f->batch);
    c->add_option("--objective", f->objective, "time, cost, mfu or goodput (the shortest wall-clock time with failures and checkpoints), across chip counts")->check(CLI::IsMember({"time", "cost", "mfu", "goodput"}))->capture_default_str();
    c->add_option("--top", f->top, "plans to show")->check(CLI::Range(std::size_t{1}, std::size_t{1000}))->capture_default_str();
    c->add_option("--threads", f->threads, "worker threads (default and most: one a core)")->check(CLI::Range(1U, 1024U));
    c->add_option("--time-limit", f->time_limit_s, "seconds the search may run before it stops and says how far it got")
        ->check(CLI::Range(1.0, 1e6))
        ->capture_default_str();
    c->add_option("--train-tokens", f->train_tokens, "tokens for time and cost to train")->check(CLI::Range(1.0, 1e16))->capture_default_str();
    c->add_option("--stack", f->stack, "software stack (stacks/*.json; default: megatron-core on GPUs, maxtext on TPUs)");
    c->add_flag("--json", f->json, "print one JSON document (schema ridgeline.search-train/1, or ridgeline.search-scaling/1 for a range)");
    add_operations_flags(*c, f->operations);  // goodput across a chip range
    // Knobs to fix; the rest are searched.
    for (const DegreeField& d : kDegreeFields)
        c->add_option("--" + std::string(d.key), f->degrees.*d.value, std::string("fix the ") + d.help)->check(CLI::PositiveNumber);
    add_plan_flags(*c, f->plan, true);
    add_what_if_flags(*c, f->what_if);
    add_memory_margin_flag(*c, f->what_if);
    add_emit_flags(*c, f->emit, EmitJob::training, true);
    add_html_flag(*c, f->html, "the Pareto front with the chosen plan, the rejections; across chip counts, the scaling curve");
    add_from_flags(*c, f->from, "fix what an existing launch configuration fixes and search the rest");
    c->callback([f, c, &options] {
        const auto emit = emit_spec(*c, f->emit, f->json, options.data_dir);
        f->html.check();
        TrainSearchSpec spec;
        if (f->hardware.empty() && f->topology.empty())
            throw InputError("--hardware", "", "required (a system or chip such as dgx-h100 or tpu-v5p), or give --topology");
        spec.model = resolve_model(f->model, options.data_dir);
        std::optional<LaunchConfig> launch;
        if (c->count("--from") > 0) {
            std::int64_t chips = 0;
            if (!f->chips.empty()) {
                const auto counts = io::parse_count_range(f->chips, "--chips", kMaxChips, kMaxChipCounts);
                if (counts.size() != 1) throw InputError("--chips", "", "with --from give one chip count: the file fixes the plan's sizes");
                chips = counts.front();
            }
            launch = read_from_flags(f->from, options.data_dir, spec.model, chips);
        }
        spec.fixed = constraints(*f, c, launch ? launch_constraints(*launch) : SearchConstraints{}, options.data_dir);
        if (emit && !spec.fixed.knob(&Plan::placement))
            if (const auto& order = find_emit_framework(emit->name)->rank_order; !order.empty())
                spec.fixed.fix(&Plan::placement, order);  // plans the framework runs as placed
        spec.fixed.recompute_policies =
            spec.fixed.knob(&Plan::recompute) ? std::vector<RecomputePolicy>{spec.fixed.plan.recompute}
            : launch && launch->recompute
                ? std::vector<RecomputePolicy>{resolve_recompute(*launch->recompute, options.data_dir, launch->file, launch->recompute_key)}
                : recompute_policies(options.data_dir, true);
        Hardware hardware;
        std::optional<Cluster> custom;
        if (!f->topology.empty()) {
            CustomTopology topology = load_topology_file(f->topology, options.data_dir);
            hardware = topology.hardware;
            custom = topology.cluster;
        } else {
            hardware = resolve_hardware(f->hardware, options.data_dir);
        }
        const auto applied = apply_what_if(hardware, f->what_if, custom.has_value());
        spec.chip = hardware.chip;
        spec.stack = !f->stack.empty()          ? resolve_stack(f->stack, options.data_dir)
                     : launch && launch->stack ? resolve_stack(*launch->stack, options.data_dir)
                                               : default_stack(hardware.chip, false, options.data_dir);
        require_job(spec.stack, false, "--stack");
        check_moe_dispatch(spec.stack, spec.fixed.plan.moe_dispatcher, spec.fixed.plan.ep_overlap, kRequest);
        spec.seq_len = launch && launch->seq_len && c->count("--seq-len") == 0 ? *launch->seq_len : f->batch.seq_len;
        spec.precision = spec.fixed.plan.precision;
        // Emitting looks further down the ranking for plans the framework can express.
        spec.top_k = emit ? std::max({f->top, f->emit.top, kEmitCandidates}) : f->top;
        spec.threads = f->threads;
        for (const std::string& name : strategies_needed(spec.fixed)) {
            Strategy strategy = resolve_strategy(name, options.data_dir);
            if (spec.fixed.knob(&Plan::strategy)) spec.fixed.plan.strategy = strategy.name;
            spec.strategies[strategy.name] = std::move(strategy);
        }
        app::SearchTrainRequest request;
        request.spec = std::move(spec);
        request.hardware = hardware;
        request.topology = custom;
        if (f->chips.empty() && launch && launch->chips > 0) request.chip_counts = {launch->chips};
        else if (f->chips.empty() && f->deadline_days <= 0) throw InputError("--chips", "", "required (or give --deadline-days with --train-tokens)");
        if (!f->chips.empty()) request.chip_counts = io::parse_count_range(f->chips, "--chips", kMaxChips, kMaxChipCounts);
        request.domains = f->nodes;
        if (c->count("--global-batch-seqs") > 0) request.global_batch_seqs = f->batch.global_batch_seqs;
        else if (c->count("--global-batch-tokens") > 0) request.global_batch_tokens = f->batch.global_batch_tokens;
        else if (launch && launch->global_batch_seqs) request.global_batch_seqs = *launch->global_batch_seqs;
        request.objective = f->objective == "cost" ? app::ScalingObjective::cost
                            : f->objective == "mfu"   ? app::ScalingObjective::mfu
                            : f->objective == "goodput" ? app::ScalingObjective::goodput
                                                        : app::ScalingObjective::time;
        request.operations = operations_overrides(*c, f->operations);
        request.train_tokens = f->train_tokens;
        request.data_dir = options.data_dir;
        // Past the limit the search stops (a refusal, exit 2): a partial search has no best plan.
        const auto started = std::chrono::steady_clock::now();
        const auto within_time_limit = [started, limit_s = f->time_limit_s](double share) {
            stop_if_interrupted();
            const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            if (elapsed_s > limit_s)
                throw InputError("--time-limit", "", "the search ran past " + report::fixed(limit_s, 0) + " s with " + report::fixed(100.0 * share, 0) +
                                                         "% of one chip count's plans searched: fix some degrees (--tp, --pp, --ep, --strategy ...), "
                                                         "narrow --chips, or give a longer --time-limit");
        };
        request.spec.progress = [within_time_limit](double share, std::uint64_t) { within_time_limit(share); };
        // The JSON when --json or --html asks for it, the table otherwise; --emit writes launch settings instead.
        const auto print = [&](const std::string& json, const auto& table, const auto& emitted) {
            f->html.write(json);
            if (emit) std::cout << emitted();
            else std::cout << with_settings(applied, f->json, f->json ? json : table()) << "\n";
        };
        const bool wants_json = f->json || f->html.wanted();
        const auto print_scaling = [&](const report::ScalingOutcome& o) {
            print(wants_json ? report::scaling_json(o) : "", [&o] { return report::scaling_table(o); },
                  [&] { return emit_chosen(*emit, o, f->emit.top); });
        };
        if (f->deadline_days > 0) {
            if (c->count("--train-tokens") == 0) throw InputError("--deadline-days", "", "needs --train-tokens: the tokens to train by then");
            ProgressLine line(f->progress);
            const auto progress = [&line](const report::ScalingPoint& p) {
                line.step("deadline search: " + std::to_string(p.chips) + " chips: " +
                          (p.best ? report::fixed(p.wall_s / 86400.0, 2) + " days" : std::string("nothing fits")));
            };
            print_scaling(app::search_train_deadline(request, f->deadline_days * 86400.0, progress));
            return;
        }
        if (request.chip_counts.size() == 1) {
            ProgressLine line(f->progress);
            request.spec.progress = [&line, within_time_limit](double share, std::uint64_t plans) {
                line.update(share, 1.0, report::si(static_cast<double>(plans), "plans"), static_cast<double>(plans), "plans");
                within_time_limit(share);
            };
            const report::TrainSearchOutcome outcome = app::search_train(request, request.chip_counts.front());
            request.spec.progress = nullptr;
            line.finish();
            print(wants_json ? report::train_search_json(outcome) : "", [&] { return report::train_search_table(outcome); },
                  [&] { return emit_plans(*emit, outcome.top, f->emit.top); });
            return;
        }
        print_scaling(app::search_train_scaling(request));
    });
}

}  // namespace ridgeline::cli
