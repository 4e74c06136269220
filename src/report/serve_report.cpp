#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "report/bound_text.hpp"
#include "report/reports.hpp"
#include "report/json_documents.hpp"
#include "report/software_text.hpp"
#include "report/interval_text.hpp"
#include "report/table.hpp"
#include "spec/serving_knobs.hpp"

namespace ridgeline::report {

namespace {

std::string plan_text(const Plan& p) {
    return "tp=" + std::to_string(p.tp) + " pp=" + std::to_string(p.pp) + " ep=" + std::to_string(p.ep) +
           " dp=" + std::to_string(p.dp) + ", weights " + std::string(dtype_name(p.weights)) + ", KV cache " +
           std::string(dtype_name(p.kv_cache));
}

void phase_rows(Table& table, const PhaseCost& p) {
    const LayerCost& c = p.per_layer;
    table.add_row({"matmul FLOPs per layer", si(c.matmul_flops, "FLOP"), seconds(c.matmul_compute_s)});
    table.add_row({"weights read per layer", si(c.weight_bytes, "B"), seconds(c.matmul_memory_s)});
    table.add_row({"attention FLOPs per layer", si(c.attention_flops, "FLOP"), seconds(c.attention_compute_s)});
    table.add_row({"KV cache per layer", si(c.kv_bytes, "B"), seconds(c.attention_memory_s)});
    for (const CollectiveUse& use : c.collectives)
        table.add_row({use.what + " per layer", si(use.bytes, "B"), seconds(use.time_s)});
    table.add_row({"one layer (each op at its roofline)", "", seconds(c.time_s())});
    table.add_row({"x " + fixed(p.layers, 0) + " layers + output layer + pipeline hops", "", seconds(p.time_s)});
}

nlohmann::json phase_json(const PhaseCost& p) {
    const LayerCost& c = p.per_layer;
    nlohmann::json collectives = nlohmann::json::array();
    for (const CollectiveUse& use : c.collectives)
        collectives.push_back({{"what", use.what}, {"op", collective_name(use.kind)}, {"axis", use.axis},
                               {"bytes", use.bytes}, {"time_s", use.time_s}, {"bottleneck", use.bottleneck}});
    return {{"time_s", p.time_s},
            {"bound", limit_text(p.bound)},
            {"tokens", p.tokens},
            {"context_tokens", p.context},
            {"matmuls_compute_bound", p.matmuls_compute_bound},
            {"by_bound_s", {{"compute", p.compute_s}, {"weights", p.weights_s}, {"kv_cache", p.kv_s}, {"network", p.network_s}}},
            {"output_layer_s", p.output_layer_s},
            {"pipeline_s", p.pipeline_s},
            {"per_layer",
             {{"matmul_flops", c.matmul_flops},
              {"attention_flops", c.attention_flops},
              {"weight_bytes", c.weight_bytes},
              {"kv_cache_bytes", c.kv_bytes},
              {"activation_bytes", c.activation_bytes},
              {"matmul_compute_s", c.matmul_compute_s},
              {"matmul_memory_s", c.matmul_memory_s},
              {"matmul_s", c.matmul_s},
              {"attention_compute_s", c.attention_compute_s},
              {"attention_memory_s", c.attention_memory_s},
              {"collective_s", c.collective_s},
              {"time_s", c.time_s()},
              {"collectives", collectives}}}};
}


std::string load_text(const LoadReport& l, const SchedulerSpec& e) {
    std::string text = "Under load: " + std::to_string(l.requests) + " requests" +
                       (l.concurrency > 0 ? " from " + std::to_string(l.concurrency) + " clients (closed loop)" : "") + " on " +
                       e.engine + " " + e.version + "'s scheduler (" + std::to_string(e.max_seqs) + " sequences, " +
                       std::to_string(e.max_batched_tokens) + " tokens an iteration, " +
                       (e.chunked_prefill ? "chunked prefill" : "whole prompts") + ", " + std::to_string(l.kv_blocks) + " KV blocks of " +
                       std::to_string(e.kv_block_tokens) + " tokens a replica)\n";
    Table table({"latency", "mean", "p50", "p90", "p99"});
    const auto row = [&](const char* name, const Percentiles& p) {
        table.add_row({name, seconds(p.mean), seconds(p.p50), seconds(p.p90), seconds(p.p99)});
    };
    row("time to first token", l.ttft_s);
    row("time per output token", l.tpot_s);
    row("inter-token latency", l.itl_s);
    row("end to end", l.e2e_s);
    text += table.render();
    text += "throughput " + si(l.output_tokens_per_s) + " output tokens/s (" + si(l.output_tokens_per_s_per_chip) + " a chip), " +
            fixed(l.requests_per_s, 2) + " requests/s over " + seconds(l.duration_s) + "; " + fixed(l.mean_running, 1) +
            " sequences and " + fixed(l.mean_step_tokens, 0) + " tokens an iteration, " + std::to_string(l.preemptions) +
            " preemptions, KV cache at most " + fixed(100.0 * l.peak_kv_fraction, 0) + "% full\n";
    if (l.slo_given)
        text += "goodput " + fixed(l.goodput_requests_per_s, 2) + " requests/s: " + fixed(100.0 * l.slo_met_fraction, 1) +
                "% of requests meet the service levels\n";
    if (l.replicas > 1)
        text += "each of the " + std::to_string(l.replicas) + " replicas takes every " + std::to_string(l.replicas) +
                "th request; one is simulated\n";
    return text;
}

nlohmann::json load_json(const LoadReport& l, const SchedulerSpec& e) {
    const auto p = [](const Percentiles& x) { return nlohmann::json{{"mean", x.mean}, {"p50", x.p50}, {"p90", x.p90}, {"p99", x.p99}}; };
    nlohmann::json queue = nlohmann::json::array();
    for (const QueueSample& q : l.queue) queue.push_back({q.time_s, q.waiting, q.running});
    nlohmann::json engine{{"name", e.engine}, {"version", e.version}};
    for (const SchedulerKnob& row : kSchedulerKnobs)
        if (row.reported)
            std::visit(
                [&](auto member) {
                    if constexpr (std::is_enum_v<std::remove_reference_t<decltype(e.*member)>>)
                        engine[row.key] = scheduler_choice(row.choices, static_cast<std::size_t>(e.*member));
                    else
                        engine[row.key] = e.*member;
                },
                row.member);
    return {{"engine", engine},
            {"requests", l.requests}, {"replicas", l.replicas},
            {"concurrency", l.concurrency > 0 ? nlohmann::json(l.concurrency) : nlohmann::json(nullptr)},
            {"duration_s", l.duration_s}, {"ttft_s", p(l.ttft_s)}, {"tpot_s", p(l.tpot_s)}, {"itl_s", p(l.itl_s)}, {"e2e_s", p(l.e2e_s)},
            {"requests_per_s", l.requests_per_s}, {"input_tokens_per_s", l.input_tokens_per_s},
            {"output_tokens_per_s", l.output_tokens_per_s}, {"output_tokens_per_s_per_chip", l.output_tokens_per_s_per_chip},
            {"mean_in_system", l.mean_in_system}, {"steps", l.steps}, {"preemptions", l.preemptions},
            {"mean_running", l.mean_running}, {"mean_step_tokens", l.mean_step_tokens}, {"kv_blocks", l.kv_blocks},
            {"peak_kv_fraction", l.peak_kv_fraction},
            {"slo_met_fraction", l.slo_given ? nlohmann::json(l.slo_met_fraction) : nlohmann::json(nullptr)},
            {"goodput_requests_per_s", l.slo_given ? nlohmann::json(l.goodput_requests_per_s) : nlohmann::json(nullptr)}, {"queue", {{"columns", {"time_s", "waiting", "running"}}, {"samples", queue}}}};
}

// "ttft_mean" -> the load's mean time to first token.
double latency_statistic(const LoadReport& l, const std::string& quantity) {
    const std::size_t cut = quantity.find('_');
    return (quantity.substr(0, cut) == "ttft" ? l.ttft_s : l.itl_s).at(quantity.substr(cut + 1));
}

// The throughput an interval bounds: under load the simulated one, which is what validate compares
// with a record measured at a concurrency.
double interval_basis(const ServingReport& r, const ServeExtras& e) { return e.load ? e.load->output_tokens_per_s : r.output_tokens_per_s; }

std::string interval_line(const ServingReport& r, const ServeExtras& e) {
    const PredictionInterval& i = e.interval;
    if (!i.available) return i.why_none.empty() ? "" : "throughput interval: " + i.why_none + "\n";
    const double tokens_per_s = interval_basis(r, e);
    return std::string(e.load ? "under load: " : "") + "output " + tokens_per_s_text(tokens_per_s) + " (" + fixed(100.0 * i.level, 0) +
           "%: " + throughput_range_text(tokens_per_s, i) + ", from " + std::to_string(i.runs) +
           " held-out serving runs like it: " + i.like + ")\n";
}

}  // namespace

std::string serve_table(const ServingScenario& s, const ServingReport& r, const ServeExtras& extras) {
    std::string text = "Serving " + s.model.name + " on " + std::to_string(s.cluster.chips()) + " x " + s.chip.name + " (" +
                       s.cluster.name + "): " + plan_text(s.plan) + "\n" + "batch " + fixed(s.batch_seqs, 0) +
                       " sequences (" + fixed(s.batch_per_replica(), 0) + " per replica), prompt " + fixed(s.input_len, 0) +
                       " tokens, output " + fixed(s.output_len, 0) + " tokens\n" + software_line(s.chip, s.stack) + "\n";
    Table prefill({"prefill of one prompt, per chip", "amount", "time"});
    phase_rows(prefill, r.prefill);
    text += prefill.render() + "time to first token " + seconds(r.prefill.time_s) + ", bound: " + limit_text(r.prefill.bound) + "\n\n";
    Table decode({"decode step (context " + fixed(r.decode.context, 0) + "), per chip", "amount", "time"});
    phase_rows(decode, r.decode);
    if (s.speculative.draft_tokens > 0)
        text += decode.render() + "speculative: " + std::to_string(s.speculative.draft_tokens) + " draft token(s) from the prediction modules (" +
                seconds(r.draft_s) + " of the " + seconds(r.decode.time_s) + " step), acceptance " + fixed(s.speculative.acceptance, 2) +
                ": " + fixed(r.decode_tokens_per_step, 2) + " tokens per step\n";
    else
        text += decode.render();
    text += "time per output token " + seconds(r.tpot_s()) + ", bound: " + limit_text(r.decode.bound) +
            " (matmuls " + (r.decode.matmuls_compute_bound ? "compute" : "memory") + "-bound)\n\n";
    if (r.moe) {
        text += "MoE decode: " + fixed(r.moe->tokens_per_group, 0) + " tokens per expert group touch " +
                fixed(r.moe->experts_touched_per_layer, 1) + " of " + fixed(r.moe->experts, 0) + " experts per layer (" +
                fixed(r.moe->experts_touched_per_chip, 1) + " per chip, " + si(r.moe->expert_bytes_per_chip, "B") +
                " of expert weights read per chip per layer)\n\n";
    }
    Table totals({"quantity", "value"});
    totals.add_row({"output tokens/s (with prefill)", si(r.output_tokens_per_s)});
    totals.add_row({"output tokens/s per chip", si(r.output_tokens_per_s_per_chip)});
    totals.add_row({"decode tokens/s (decode only)", si(r.decode_tokens_per_s)});
    totals.add_row({"tokens/s per user", fixed(r.tokens_per_s_per_user, 1)});
    totals.add_row({"requests/s", fixed(r.requests_per_s, 2)});
    totals.add_row({"KV cache per token (all layers)", si(r.kv_cache_bytes_per_token, "B")});
    totals.add_row({"KV cache per sequence (full context)", si(r.kv_cache_bytes_per_sequence, "B")});
    totals.add_row({"largest batch that fits", fixed(r.max_batch_seqs, 0) + " sequences"});
    totals.add_row({"cost per million output tokens", r.cost_per_million_output_tokens_usd ? "$" + fixed(*r.cost_per_million_output_tokens_usd, 3)
                                                      : !r.fits ? std::string("none: the deployment does not fit")
                                                                : no_price_text(s.chip.name)});
    if (extras.energy && extras.energy->energy) {
        const EnergyReport& e = *extras.energy->energy;
        totals.add_row({"power per chip (" + fixed(100.0 * extras.energy->kernel_share, 0) + "% in kernels)", si(e.chip_w, "W")});
        totals.add_row({"facility power (chips, hosts, PUE)", si(e.facility_w, "W")});
        totals.add_row({"energy per million output tokens", si(e.per_million_tokens_j / 3.6e6, "kWh")});
    }
    text += totals.render();
    text += interval_line(r, extras);
    text += "\n";
    if (extras.energy) {
        for (const std::string& line : extras.energy->notes.assumptions) text += "energy assumed: " + line + "\n";
        for (const std::string& line : extras.energy->notes.missing) text += "energy not worked out: " + line + "\n";
        text += "\n";
    }
    Table memory({"memory per chip", "bytes"});
    memory.add_row({"weights", si(r.memory.weights_bytes, "B")});
    memory.add_row({"KV cache", si(r.memory.kv_cache_bytes, "B")});
    memory.add_row({"activations (prompt, logits)", si(r.memory.activations_bytes, "B")});
    memory.add_row({"total", si(r.memory.total_bytes(), "B") + " of " + si(r.hbm_bytes, "B") +
                                 (r.fits ? " (fits)" : " (does NOT fit: " + r.overflow + ")")});
    text += memory.render();
    if (extras.curve) {
        Table curve({"batch", "TPOT", "TTFT", "tokens/s", "per chip", "per user", "decode bound", "fits"});
        for (const CurvePoint& p : extras.curve->points)
            curve.add_row({fixed(p.batch_seqs, 0), seconds(p.tpot_s), seconds(p.ttft_s), si(p.output_tokens_per_s),
                           si(p.output_tokens_per_s_per_chip), fixed(p.tokens_per_s_per_user, 1),
                           limit_text(p.bound) + (p.batch_seqs == extras.curve->critical_batch_seqs ? " <- critical batch" : ""),
                           p.fits ? "yes" : "no"});
        text += "\n" + curve.render();
        text += extras.curve->critical_batch_seqs > 0
                    ? "decode matmuls turn compute-bound at batch " + fixed(extras.curve->critical_batch_seqs, 0) + "\n"
                    : "decode matmuls stay memory-bound over these batches\n";
    }
    if (extras.disaggregation) {
        const Disaggregation& g = *extras.disaggregation;
        text += "\nDisaggregated at " + fixed(g.requests_per_s, 2) + " requests/s: " + std::to_string(g.prefill_replicas) +
                " prefill replicas (" + std::to_string(g.prefill_chips) + " chips) and " + std::to_string(g.decode_replicas) +
                " decode replicas (" + std::to_string(g.decode_chips) + " chips), " + std::to_string(g.chips()) +
                " chips; " + fixed(g.prefill_per_decode, 2) + " prefill per decode replica\n";
    } else if (extras.requests_per_s > 0) {
        text += "\nNo disaggregated split at " + fixed(extras.requests_per_s, 2) + " requests/s: the deployment does not fit\n";
    }
    if (extras.load) {
        text += "\n" + load_text(*extras.load, *extras.engine);
        for (const auto& [quantity, i] : extras.latency_intervals) {
            const double value_s = latency_statistic(*extras.load, quantity);
            const std::size_t cut = quantity.find('_');
            const std::string name = quantity.substr(cut + 1) + (quantity.substr(0, cut) == "ttft" ? " time to first token" : " inter-token latency");
            const std::string why = i.available ? fixed(100.0 * i.level, 0) + "%: " + latency_range_text(value_s, i) + ", from " +
                                                      std::to_string(i.runs) + " held-out serving runs like it: " + i.like
                                                : i.why_none;
            text += name + " " + seconds(value_s) + " (" + why + ")\n";
        }
    }
    return text;
}

nlohmann::json serving_plan_json(const Plan& plan) {
    nlohmann::json doc = {{"tp", plan.tp}, {"pp", plan.pp}, {"ep", plan.ep}, {"dp", plan.dp}};
    for (const ServingKnob& knob : kServingKnobs)
        if (const auto dtype = serving_dtype(plan, knob)) doc[knob.key] = dtype_name(*dtype);
    return doc;
}

std::string serve_json(const ServingScenario& s, const ServingReport& r, const ServeExtras& extras) {
    nlohmann::json doc = job_document("ridgeline.serve/1", s.model.name, s.chip, s.cluster, s.stack);
    doc["plan"] = serving_plan_json(s.plan);
    doc["batch_seqs"] = s.batch_seqs;
    doc["input_len"] = s.input_len;
    doc["output_len"] = s.output_len;
    doc["prefill"] = phase_json(r.prefill);
    doc["prefill"]["ttft_s"] = r.prefill.time_s;
    doc["prefill"]["batch_prefill_s"] = r.prefill_batch_s;
    doc["decode"] = phase_json(r.decode);
    doc["decode"]["tpot_s"] = r.tpot_s();
    doc["decode"]["step_s"] = r.decode.time_s;
    doc["decode"]["tokens_per_step"] = r.decode_tokens_per_step;
    if (s.speculative.draft_tokens > 0)
        doc["decode"]["speculative"] = {{"draft_tokens", s.speculative.draft_tokens}, {"acceptance", s.speculative.acceptance},
                                        {"draft_s", r.draft_s}};
    doc["throughput"] = {{"output_tokens_per_s", r.output_tokens_per_s},
                         {"output_tokens_per_s_per_chip", r.output_tokens_per_s_per_chip},
                         {"decode_tokens_per_s", r.decode_tokens_per_s},
                         {"tokens_per_s_per_user", r.tokens_per_s_per_user},
                         {"requests_per_s", r.requests_per_s}};
    if (const PredictionInterval& i = extras.interval; i.available || !i.why_none.empty()) {
        doc["throughput_interval"] = throughput_interval_json(interval_basis(r, extras), i);
        if (i.available) doc["throughput_interval"]["of"] = extras.load ? "under_load" : "static";
    }
    doc["kv_cache_bytes_per_token"] = r.kv_cache_bytes_per_token;
    doc["kv_cache_bytes_per_sequence"] = r.kv_cache_bytes_per_sequence;
    doc["kv_tokens_freed_per_step"] = r.kv_tokens_freed_per_step;
    doc["memory"] = {{"weights_bytes", r.memory.weights_bytes}, {"kv_cache_bytes", r.memory.kv_cache_bytes},
                     {"activations_bytes", r.memory.activations_bytes}, {"total_bytes", r.memory.total_bytes()},
                     {"hbm_bytes", r.hbm_bytes}};
    doc["fits"] = r.fits;
    if (!r.fits) {
        doc["overflow_bytes"] = r.overflow_bytes;
        doc["overflow"] = r.overflow;
    }
    doc["max_batch_seqs"] = r.max_batch_seqs;
    doc["cost_per_million_output_tokens_usd"] =
        r.cost_per_million_output_tokens_usd ? nlohmann::json(*r.cost_per_million_output_tokens_usd) : nlohmann::json(nullptr);
    if (extras.energy) {
        const ServeEnergy& se = *extras.energy;
        nlohmann::json energy = {{"kernel_share", se.kernel_share}, {"assumptions", se.notes.assumptions}, {"missing", se.notes.missing}};
        if (se.energy)
            energy.update({{"chip_w", se.energy->chip_w}, {"it_w", se.energy->it_w}, {"facility_w", se.energy->facility_w},
                           {"per_million_output_tokens_j", se.energy->per_million_tokens_j}});
        doc["energy"] = energy;
    }
    if (r.moe)
        doc["moe_decode"] = {{"experts", r.moe->experts},
                             {"top_k", r.moe->top_k},
                             {"tokens_per_expert_group", r.moe->tokens_per_group},
                             {"experts_touched_per_layer", r.moe->experts_touched_per_layer},
                             {"experts_touched_per_chip", r.moe->experts_touched_per_chip},
                             {"expert_weight_bytes_per_chip_per_layer", r.moe->expert_bytes_per_chip}};
    if (extras.curve) {
        nlohmann::json points = nlohmann::json::array();
        for (const CurvePoint& p : extras.curve->points)
            points.push_back({{"batch_seqs", p.batch_seqs}, {"tpot_s", p.tpot_s}, {"ttft_s", p.ttft_s},
                              {"output_tokens_per_s", p.output_tokens_per_s},
                              {"output_tokens_per_s_per_chip", p.output_tokens_per_s_per_chip},
                              {"tokens_per_s_per_user", p.tokens_per_s_per_user}, {"decode_bound", limit_text(p.bound)},
                              {"matmuls_compute_bound", p.matmuls_compute_bound}, {"fits", p.fits}});
        doc["curve"] = {{"points", points},
                        {"critical_batch_seqs", extras.curve->critical_batch_seqs > 0
                                                    ? nlohmann::json(extras.curve->critical_batch_seqs)
                                                    : nlohmann::json(nullptr)}};
    }
    if (extras.disaggregation) {
        const Disaggregation& g = *extras.disaggregation;
        doc["disaggregated"] = {{"requests_per_s", g.requests_per_s}, {"prefill_per_decode_replica", g.prefill_per_decode},
                                {"prefill_replicas", g.prefill_replicas}, {"decode_replicas", g.decode_replicas},
                                {"prefill_chips", g.prefill_chips}, {"decode_chips", g.decode_chips}, {"chips", g.chips()}};
    }
    if (extras.load) {
        doc["load"] = load_json(*extras.load, *extras.engine);
        for (const auto& [quantity, i] : extras.latency_intervals)
            doc["load"]["intervals"][quantity] = latency_interval_json(latency_statistic(*extras.load, quantity), i);
    }
    return doc.dump(2);
}

}  // namespace ridgeline::report
