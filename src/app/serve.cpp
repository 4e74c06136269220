#include "app/serve.hpp"

#include <algorithm>

#include "accuracy/residuals_file.hpp"
#include "core/error.hpp"
#include "inference/load.hpp"
#include "io/trace_file.hpp"
#include "stack/engine_file.hpp"

namespace ridgeline::app {

ServeOutcome serve(ServeRequest request) {
    ServingSetup& setup = request.setup;
    setup.batch_seqs = static_cast<double>(request.batches.front());
    report::ServeExtras extras;
    if (request.batches.size() > 1) {
        // The report itself is at the largest batch of the range that fits (the most throughput).
        const std::vector<double> values(request.batches.begin(), request.batches.end());
        const std::int64_t replicas = setup.plan.dp > 0 ? setup.plan.dp : setup.chips / (setup.plan.tp * setup.plan.pp);
        setup.batch_seqs = static_cast<double>(std::max<std::int64_t>(replicas, 1));
        const ServingScenario probe = build_serving_scenario(setup);
        extras.curve = serving_curve(probe, values);
        if (extras.curve->points.empty())
            throw InputError("--batch", "", "no batch in " + request.batches_text + " splits over " + std::to_string(probe.plan.dp) + " replicas");
        setup.batch_seqs = extras.curve->points.front().batch_seqs;
        for (const CurvePoint& point : extras.curve->points)
            if (point.fits) setup.batch_seqs = point.batch_seqs;
    }
    ServeOutcome out{build_serving_scenario(setup), {}, {}};
    const ServingScenario& scenario = out.scenario;
    out.report = simulate_serving(scenario);
    if (request.under_load()) {
        const SchedulerSpec scheduler = resolve_engine(request.engine.empty() ? default_engine_name(scenario.chip) : request.engine, request.data_dir);
        const LoadOptions load{request.concurrency, request.slo_ttft_s, request.slo_tpot_s};
        if (!request.trace.empty()) {
            io::TraceFile requests(request.trace.string(), scenario.model.context_length);
            extras.load = simulate_load(scenario, scheduler, requests, load);
        } else {
            const auto input = static_cast<std::int64_t>(setup.input_len), output = static_cast<std::int64_t>(setup.output_len);
            FixedLengthRequests requests(request.requests, input, output, request.request_rate);
            extras.load = simulate_load(scenario, scheduler, requests, load);
        }
        extras.engine = scheduler;
    }
    const std::vector<Residual> residuals = load_residuals(serving_residuals_path(request.data_dir));
    const RunKind kind = serving_run_kind(extras.engine ? extras.engine->engine : "", scenario.chip.name, scenario.model.moe.has_value(),
                                          scenario.cluster.chips());
    extras.interval = prediction_interval(residuals, kind);
    // Under load, each latency statistic published runs measured.
    if (extras.load)
        for (const Residual& r : residuals)
            if (r.quantity != "throughput" && !extras.latency_intervals.count(r.quantity))
                extras.latency_intervals[r.quantity] = prediction_interval(residuals, kind, 0.9, {}, r.quantity);
    extras.requests_per_s = request.requests_per_s;
    if (request.requests_per_s > 0 && out.report.fits) extras.disaggregation = disaggregate(scenario, out.report, request.requests_per_s);
    report::ServeEnergy& energy = extras.energy.emplace();
    energy.kernel_share = serving_kernel_share(out.report, scenario.output_len);
    energy.energy = facility_energy(scenario.chip, setup.hardware, static_cast<double>(scenario.cluster.chips()), energy.kernel_share,
                                    out.report.output_tokens_per_s, request.power, energy.notes);
    out.extras = std::move(extras);
    return out;
}

}  // namespace ridgeline::app
