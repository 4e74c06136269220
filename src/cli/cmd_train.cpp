#include <iostream>

#include "model/plausible_sizes.hpp"
#include "app/train.hpp"
#include "cli/commands.hpp"
#include "cli/batch_flags.hpp"
#include "cli/emit_flags.hpp"
#include "cli/from_flags.hpp"
#include "cli/html_flag.hpp"
#include "cli/operations_flags.hpp"
#include "cli/plan_flags.hpp"
#include "cli/what_if.hpp"
#include "stack/stack_file.hpp"
#include "core/error.hpp"
#include "emit/emit.hpp"
#include "from/launch_config.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "report/reports.hpp"
#include "scenario/scenario_file.hpp"
#include "topology/topology_file.hpp"

namespace ridgeline::cli {

void add_train_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        std::string model, hardware;
        std::int64_t chips = 0, nodes = 0;
        BatchFlags batch;
        double train_tokens = 0;
        Degrees degrees;
        PlanFlags plan;
        bool no_overlap = false, json = false;
        HtmlTarget html;
        std::string scenario, topology, stack;
        OperationsFlags operations;
        WhatIfFlags what_if;
        EmitFlags emit;
        FromFlags from;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* c = app.add_subcommand("train", "step time, MFU, memory per chip and the bound of each part of a training step");
    c->add_option("--model", f->model, "model name, model file or HF config.json (required unless --scenario names it)");
    c->add_option("--hardware", f->hardware, "system or chip (required unless --scenario or --topology gives it)");
    c->add_option("--scenario", f->scenario, "a job file (ridgeline.scenario/1); flags given as well override its fields");
    c->add_option("--chips", f->chips, "chips in the job")->check(CLI::Range(std::int64_t{1}, kMaxChips));
    c->add_option("--topology", f->topology, "a custom topology file (ridgeline.topology/1): its chip and cluster replace --hardware");
    c->add_option("--nodes", f->nodes, "scale-out domains (DGX nodes, NVL72 racks, TPU slices); default derived");
    add_batch_flags(*c, f->batch);
    for (const DegreeField& d : kDegreeFields) c->add_option("--" + std::string(d.key), f->degrees.*d.value, d.help)->check(CLI::PositiveNumber);
    add_plan_flags(*c, f->plan);
    c->add_flag("--no-overlap", f->no_overlap, "the same as --overlap off (older spelling)")->group("")->excludes("--overlap");
    c->add_option("--train-tokens", f->train_tokens, "also report time and cost to train this many tokens")->check(CLI::Range(1.0, 1e16));
    add_operations_flags(*c, f->operations);  // goodput and energy inputs, with --train-tokens
    add_what_if_flags(*c, f->what_if);
    add_memory_margin_flag(*c, f->what_if);
    c->add_option("--stack", f->stack, "software stack (stacks/*.json; default: megatron-core on GPUs, maxtext on TPUs)");
    c->add_flag("--json", f->json, "print one JSON document (schema ridgeline.train/1)");
    add_emit_flags(*c, f->emit, EmitJob::training, false);
    add_html_flag(*c, f->html, "the step by component and bound, memory per chip against capacity");
    add_from_flags(*c, f->from, "the plan of an existing launch configuration");
    c->callback([f, c, &options] {
        const auto given = [c](const char* flag) { return c->count(flag) > 0; };
        const auto emit = emit_spec(*c, f->emit, f->json, options.data_dir);
        f->html.check();
        TrainingSetup setup;
        double train_tokens = f->train_tokens;
        double scenario_batch_tokens = 0;  // a scenario's batch in tokens: kept when --seq-len changes
        const bool from = given("--from");
        if (from && !f->scenario.empty()) throw InputError("--from", "", "give --scenario or --from, not both");
        if (!f->scenario.empty()) {
            ScenarioFile file = load_scenario_file(f->scenario, options.data_dir);
            setup = file.setup;
            if (!given("--train-tokens")) train_tokens = file.train_tokens;
            scenario_batch_tokens = file.global_batch_tokens;
        } else {
            if (!given("--chips") && !given("--topology") && !from)
                throw InputError("--chips", "", "required (or give a --scenario or --topology file)");
            setup.seq_len = f->batch.seq_len;
        }
        // Nothing is assumed: the model and the hardware come from flags, the scenario or the topology.
        if (f->scenario.empty() && !given("--model")) throw InputError("--model", "", "required (a model name, model file or HF config.json), or give --scenario");
        if (f->scenario.empty() && !given("--hardware") && !given("--topology"))
            throw InputError("--hardware", "", "required (a system or chip such as dgx-h100 or tpu-v5p), or give --scenario or --topology");
        if (given("--model")) setup.model = resolve_model(f->model, options.data_dir);
        if (given("--hardware")) setup.hardware = resolve_hardware(f->hardware, options.data_dir);
        if (given("--chips")) setup.chips = f->chips;
        if (given("--topology")) {
            CustomTopology custom = load_topology_file(f->topology, options.data_dir);
            setup.hardware = custom.hardware;
            setup.cluster = custom.cluster;
            if (!given("--chips") && f->scenario.empty()) setup.chips = custom.cluster.chips();
        }
        std::optional<LaunchConfig> launch;
        if (from) {
            launch = read_from_flags(f->from, options.data_dir, setup.model, setup.chips);
            apply_launch_config(*launch, setup, options.data_dir);
        }
        const auto applied = apply_what_if(setup.hardware, f->what_if, setup.cluster.has_value());
        if (given("--nodes")) setup.domains = f->nodes;
        if (given("--seq-len")) setup.seq_len = f->batch.seq_len;
        Plan& p = setup.plan;
        for (const DegreeField& d : kDegreeFields)
            if (given(("--" + std::string(d.key)).c_str())) p.*d.value = f->degrees.*d.value;
        GivenKnobs knobs{p, {}};
        apply_plan_flags(*c, f->plan, knobs, options.data_dir);
        p = knobs.plan;
        if (given("--no-overlap")) p.overlap = false;
        if (given("--stack")) setup.stack = resolve_stack(f->stack, options.data_dir);
        // A batch in tokens splits into sequences of the final length; a scenario's keeps its tokens when --seq-len changes.
        app::TrainRequest request{std::move(setup), std::nullopt, "--global-batch-tokens", train_tokens, {}, options.data_dir};
        TrainingSetup& s = request.setup;
        if (given("--global-batch-seqs")) s.global_batch_seqs = f->batch.global_batch_seqs;
        else if (given("--global-batch-tokens")) request.batch_tokens = f->batch.global_batch_tokens;
        else if (launch && launch->global_batch_seqs) s.global_batch_seqs = *launch->global_batch_seqs;
        else if (scenario_batch_tokens > 0 && given("--seq-len")) {
            request.batch_tokens = scenario_batch_tokens;
            request.batch_field = "--seq-len";
        }
        else if (f->scenario.empty()) s.global_batch_seqs = static_cast<double>(s.chips);  // one sequence per chip
        if (train_tokens > 0) request.operations = operations_overrides(*c, f->operations);
        const app::TrainOutcome outcome = app::train(std::move(request));
        const TrainingScenario& scenario = outcome.scenario;
        const TrainingReport& report = outcome.report;
        // The page is written with --emit too: the configuration goes to stdout, the report to the page.
        const bool document = f->json || f->html.wanted();
        std::string json, table;
        if (!outcome.outlook) {
            if (document) json = report::training_json(scenario, report, 0);
            table = report::training_table(scenario, report, 0);
        } else {
            if (document) json = report::training_outlook_json(scenario, report, *outcome.outlook);
            table = report::training_table(scenario, report, train_tokens) + "\n" + report::outlook_table(scenario, *outcome.outlook);
        }
        f->html.write(json);
        if (emit) {
            std::cout << emit_training(*emit, scenario, report);
            return;
        }
        std::cout << with_settings(applied, f->json, f->json ? json : table) << "\n";
    });
}

}  // namespace ridgeline::cli
