// Serving records (kind "serve"): the record's model, chips and plan through the serving engine.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "inference/load.hpp"
#include "scenario/serving_setup.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/engine_file.hpp"
#include "validation/validate.hpp"

namespace ridgeline {

RecordResult predict_serve_record(const RunRecord& r, const std::filesystem::path& data_dir) {
    RecordResult result = result_for(r);
    result.measured_output_tokens_per_s = r.output_tokens_per_s.value_or(0.0);
    result.reason = !r.output_tokens_per_s           ? "no measured output tokens/s"
                    : !r.input_len || !r.output_len ? "no input or output length"
                                                    : unpredictable_reason(r, data_dir);
    if (result.reason.empty() && r.cp != 1) result.reason = "context parallelism in serving is not modelled";
    if (!result.reason.empty()) return result;
    const std::string chip = record_chip_name(r.accelerator, data_dir);

    try {
        ServingSetup setup;
        setup.model = record_model(r);
        setup.hardware = resolve_hardware(chip, data_dir);
        setup.strategy = resolve_strategy(kServingStrategy, data_dir);
        setup.chips = r.count;
        setup.plan.tp = r.tp;
        setup.plan.pp = r.pp;
        setup.plan.ep = r.ep;
        setup.plan.dp = r.dp;
        // fp8 records run fp8 GEMMs on fp8 weights; the cache is in the dtype the record gives, else
        // the weights' (FP8 serving stacks quantise the cache with the checkpoint).
        setup.plan.weights = r.precision == "fp8" ? Dtype::fp8 : Dtype::bf16;
        setup.plan.kv_cache = r.kv_cache_dtype ? *parse_dtype(*r.kv_cache_dtype) : setup.plan.weights;
        if (r.attention_weights_dtype) setup.plan.attention_weights = *parse_dtype(*r.attention_weights_dtype);
        setup.input_len = static_cast<double>(*r.input_len);
        setup.output_len = static_cast<double>(*r.output_len);
        setup.batch_seqs = static_cast<double>(r.dp);
        const double replicas = static_cast<double>(r.dp);
        ServingReport best;
        if (r.concurrency) {
            setup.batch_seqs = static_cast<double>(*r.concurrency);
            const ServingScenario scenario = build_serving_scenario(setup);
            best = simulate_serving(scenario);
            result.batch_seqs = setup.batch_seqs;
            result.static_output_tokens_per_s = best.output_tokens_per_s;
            if (r.pp == 1 && *r.concurrency % r.dp == 0) {
                // The record's engine where one is described, else vLLM's defaults for the chip.
                // A release whose defaults differ is listed as framework@version.
                const auto engines = list_engines(data_dir);
                std::string engine = default_engine_name(scenario.chip);
                for (const std::string& name : {r.framework, r.framework + "@" + r.framework_version})
                    if (!r.framework.empty() && io::find_entry(engines, name)) engine = name;
                const SchedulerSpec scheduler = resolve_engine(engine, data_dir);
                // Enough rounds of requests per client for the closed loop's start to wash out.
                FixedLengthRequests requests(std::max<std::int64_t>(10 * *r.concurrency, 100), *r.input_len, *r.output_len, 0);
                const LoadReport load = simulate_load(scenario, scheduler, requests, {*r.concurrency});
                best.output_tokens_per_s = load.output_tokens_per_s;
                result.engine = scheduler.engine;
                result.predicted_ttft_s = load.ttft_s.p50;
                result.predicted_tpot_s = load.tpot_s.p50;
                if (r.ttft_s) result.ttft = RecordResult::Latency{r.ttft_s->statistic, r.ttft_s->value_s, load.ttft_s.at(r.ttft_s->statistic)};
                if (r.itl_s) result.itl = RecordResult::Latency{r.itl_s->statistic, r.itl_s->value_s, load.itl_s.at(r.itl_s->statistic)};
            }
        } else {
            // Offline: the runtime fills memory; take the best throughput over the batches that fit.
            const ServingScenario probe = build_serving_scenario(setup);
            const ServingReport first = simulate_serving(probe);
            std::vector<double> batches;
            for (double b = replicas; b <= first.max_batch_seqs; b *= 2) batches.push_back(b);
            if (first.max_batch_seqs >= replicas)
                batches.push_back(std::floor(first.max_batch_seqs / replicas) * replicas);
            if (batches.empty()) {
                result.reason = "not even one sequence fits in memory";
                return result;
            }
            for (double b : batches) {
                setup.batch_seqs = b;
                const ServingReport report = simulate_serving(build_serving_scenario(setup));
                if (report.fits && report.output_tokens_per_s > best.output_tokens_per_s) {
                    best = report;
                    result.batch_seqs = b;
                }
            }
        }
        result.predicted_output_tokens_per_s = best.output_tokens_per_s;
        result.bound = best.decode.bound;
        result.like = serving_run_kind(result.engine, chip, r.moe.has_value(), r.count);
        result.error = best.output_tokens_per_s / result.measured_output_tokens_per_s - 1.0;
        result.ok = std::isfinite(result.error) && best.output_tokens_per_s > 0;
        if (!result.ok) result.reason = "prediction is not finite";
    } catch (const InputError& e) {
        result.reason = e.what();
    }
    return result;
}

}  // namespace ridgeline
