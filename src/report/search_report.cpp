#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/model_summary.hpp"
#include "report/json_documents.hpp"
#include "report/bound_text.hpp"
#include "report/reports.hpp"
#include "report/search_reports.hpp"
#include "report/interval_text.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {

constexpr std::array<const char*, kRejections> kRejectionKeys = {
    "tensor_heads", "tensor_kv_heads", "expert_count", "pipeline_layers",
    "context_seq", "batch_data", "interleave_microbatches", "strategy_dims", "placement", "memory"};

// 41204 -> "41,204": plan counts are read, not estimated.
std::string count_text(std::uint64_t value) {
    std::string digits = std::to_string(value), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string whole(double value) { return std::to_string(static_cast<long long>(value)); }

std::string rejection_text(Rejection why, const TrainSearchSpec& spec) {
    const ModelSpec& m = spec.model;
    switch (why) {
        case Rejection::tensor_heads: return "tensor did not divide heads=" + std::to_string(m.n_heads);
        case Rejection::tensor_kv_heads: return "tensor did not divide kv_heads=" + std::to_string(m.n_kv_heads);
        case Rejection::expert_count: return "expert did not divide experts=" + std::to_string(m.moe ? m.moe->n_experts : 0);
        case Rejection::pipeline_layers: return "more pipeline stages than layers=" + std::to_string(m.n_layers);
        case Rejection::context_seq: return "context did not divide seq_len=" + whole(spec.seq_len);
        case Rejection::batch_data: return "data-parallel degree did not divide the batch of " + whole(spec.global_batch_seqs) + " sequences";
        case Rejection::interleave_microbatches: return "interleaved schedule with micro-batches not a multiple of the stages";
        case Rejection::strategy_dims: return "the strategy split a model dimension unevenly";
        case Rejection::placement: return "an axis, or a collective over it, did not fit the topology in that order";
        case Rejection::memory: return "did not fit in " + si(spec.chip.hbm_bytes, "B");
    }
    return "?";
}

std::string degrees_text(const SearchedPlan& p) {
    std::string text = "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " cp" + std::to_string(p.cp) + " dp" +
                       std::to_string(p.dp);
    if (p.fsdp > 1) text += " (fsdp" + std::to_string(p.fsdp) + ")";
    if (p.ep > 1) text += " ep" + std::to_string(p.ep) + (p.etp == 1 ? " etp1" : "");
    if (p.sequence_parallel) text += " sp";
    return text;
}

std::string knobs_text(const SearchedPlan& p) {
    std::string text = "mb " + whole(p.micro_batch_seqs) + "x" + whole(p.microbatches);
    if (p.pp > 1) text += std::string(" ") + schedule_name(p.schedule) + (p.vpp > 1 ? " v" + std::to_string(p.vpp) : "");
    text += " rc=" + p.recompute.name + " zero" + std::to_string(p.zero.value_or(0));
    if (p.offload_optimizer) text += " offload";
    if (!p.overlap) text += " no-overlap";
    if (p.tp_overlap) text += " tp-overlap";
    if (p.ep > 1 && p.moe_dispatcher != "alltoall") text += " " + p.moe_dispatcher;
    if (p.ep_overlap) text += " ep-overlap";
    return text;
}

std::string placement_text(const SearchedPlan& p) {
    std::string text;
    for (const std::string& axis : p.placement) text += (text.empty() ? "" : ",") + axis;
    if (text.empty()) return "-";
    return p.other_orders > 0 ? text + " (+" + std::to_string(p.other_orders) + " orders alike)" : text;
}

nlohmann::json plan_document(const SearchedPlan& p) {
    nlohmann::json doc = {{"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"ep", p.ep}, {"fsdp", p.fsdp},
                          {"etp", p.etp == 0 ? p.tp : p.etp}, {"vpp", p.vpp}, {"sequence_parallel", p.sequence_parallel},
                          {"zero", p.zero.value_or(0)}, {"micro_batch_seqs", p.micro_batch_seqs}, {"microbatches", p.microbatches},
                          {"schedule", schedule_name(p.schedule)}, {"recompute", p.recompute.name},
                          {"offload_optimizer", p.offload_optimizer}, {"overlap", p.overlap}, {"tp_overlap", p.tp_overlap},
                          {"reshard_after_forward", p.fsdp > 1 && p.reshards_after_forward()},
                          {"moe_dispatcher", p.moe_dispatcher}, {"ep_overlap", p.ep_overlap}, {"expert_imbalance", p.expert_imbalance},
                          {"mtp_depth", p.mtp_depth}, {"uneven_pipeline", !p.stage_layers.empty()}, {"placement", p.placement}};
    doc["other_placements_alike"] = p.other_orders;
    return doc;
}

nlohmann::json rejections_document(const TrainSearchResult& r) {
    nlohmann::json doc = nlohmann::json::object();
    for (std::size_t i = 0; i < kRejections; ++i) doc[kRejectionKeys[i]] = r.rejected[i];
    return doc;
}

nlohmann::json rejection_examples_document(const TrainSearchResult& r) {
    nlohmann::json doc = nlohmann::json::object();
    for (std::size_t i = 0; i < kRejections; ++i)
        if (!r.examples[i].reason.empty()) doc[kRejectionKeys[i]] = r.examples[i].reason;
    return doc;
}

std::string rejections_text(const TrainSearchResult& r, const TrainSearchSpec& spec) {
    Table table({"plans rejected", "why"});
    for (std::size_t i = 0; i < kRejections; ++i)
        if (r.rejected[i] > 0) table.add_row({count_text(r.rejected[i]), rejection_text(static_cast<Rejection>(i), spec)});
    std::string text = table.render();
    for (std::size_t i = 0; i < kRejections; ++i)
        if (!r.examples[i].reason.empty()) text += "\nfirst " + std::string(kRejectionKeys[i]) + " rejection: " + r.examples[i].reason;
    return text + "\n";
}

struct ComparisonSummary {
    std::size_t compared = 0, in_top_5_percent = 0;
    double median_percentile = 0, median_gain = 0;
};

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

ComparisonSummary summarize(const std::vector<PublishedComparison>& comparisons) {
    ComparisonSummary s;
    std::vector<double> percentiles, gains;
    for (const auto& c : comparisons) {
        if (!c.ok) continue;
        ++s.compared;
        if (c.percentile() <= 0.05) ++s.in_top_5_percent;
        percentiles.push_back(c.percentile());
        gains.push_back(c.predicted_gain());
    }
    s.median_percentile = median(percentiles);
    s.median_gain = median(gains);
    return s;
}

}  // namespace

std::string comparison_table(const std::vector<PublishedComparison>& comparisons) {
    Table table({"record", "valid plans", "published rank", "top %", "best plan", "predicted gain"});
    std::size_t skipped = 0;
    for (const auto& c : comparisons) {
        if (!c.ok) {
            ++skipped;
            continue;
        }
        table.add_row({c.id, count_text(c.plans_valid), count_text(c.rank), fixed(100.0 * c.percentile(), 2) + "%",
                       degrees_text(c.best) + ", " + knobs_text(c.best), fixed(100.0 * c.predicted_gain(), 1) + "%"});
    }
    const ComparisonSummary s = summarize(comparisons);
    return table.render() + "\n" + std::to_string(s.compared) + " published plans compared (" + std::to_string(skipped) +
           " skipped): median rank in the top " + fixed(100.0 * s.median_percentile, 2) + "% of valid plans; " +
           std::to_string(s.in_top_5_percent) + " in the top 5%; median predicted gain of the best plan " +
           fixed(100.0 * s.median_gain, 1) + "%\n";
}

std::string comparison_json(const std::vector<PublishedComparison>& comparisons) {
    nlohmann::json doc;
    doc["schema"] = "ridgeline.compare-published/1";
    doc["records"] = nlohmann::json::array();
    for (const auto& c : comparisons) {
        nlohmann::json record = {{"id", c.id}, {"source", c.source}, {"ok", c.ok}};
        if (!c.ok) {
            record["reason"] = c.reason;
        } else {
            record["plans_valid"] = c.plans_valid;
            record["published_rank"] = c.rank;
            record["published_percentile"] = c.percentile();
            record["published_step_time_s"] = c.published_step_s;
            record["published_fits"] = c.published_fits;
            record["best_step_time_s"] = c.best_step_s;
            record["predicted_gain"] = c.predicted_gain();
            record["best_plan"] = plan_document(c.best);
        }
        doc["records"].push_back(record);
    }
    const ComparisonSummary s = summarize(comparisons);
    doc["summary"] = {{"compared", s.compared}, {"in_top_5_percent", s.in_top_5_percent},
                      {"median_percentile", s.median_percentile}, {"median_predicted_gain", s.median_gain}};
    return doc.dump(2);
}

std::string train_search_table(const TrainSearchOutcome& o) {
    const TrainSearchSpec& spec = o.spec;
    const TrainSearchResult& r = o.result;
    std::string text = "Search: " + spec.model.name + " on " + std::to_string(spec.cluster.chips()) + " x " + spec.chip.name + " (" +
                       spec.cluster.name + "), seq " + whole(spec.seq_len) + ", global batch " + whole(spec.global_batch_seqs) +
                       " sequences\n" + count_text(r.plans_evaluated) + " plans in " + fixed(o.elapsed_s, 2) + " s on " +
                       std::to_string(o.threads) + " threads; " + count_text(r.plans_valid()) + " valid\n\n";
    text += rejections_text(r, spec) + "\n";
    if (o.top.empty()) return text + "No plan fits: the rejections above say what to change (more chips, a smaller batch, fewer layers per chip).";
    Table top({"#", "step", "90% range", "MFU", "memory", "degrees", "knobs", "placement (inner first)"});
    for (std::size_t i = 0; i < o.top.size(); ++i) {
        const PlanWithReport& p = o.top[i];
        const std::string range = p.report.interval ? time_range_text(p.report.step_time_s, *p.report.interval) : "none";
        top.add_row({std::to_string(i + 1), seconds(p.report.step_time_s), range, fixed(100.0 * p.report.mfu, 1) + "%",
                     si(p.report.memory.total_bytes(), "B"), degrees_text(p.plan), knobs_text(p.plan), placement_text(p.plan)});
    }
    text += "best plans\n" + top.render() + "\n";
    Table shares({"#", "where the step goes (share of the step; bound)"});
    for (std::size_t i = 0; i < o.top.size(); ++i) {
        std::string line;
        for (const StepComponent& c : o.top[i].report.components)
            if (c.time_s > 0.005 * o.top[i].report.step_time_s)
                line += (line.empty() ? "" : ", ") + c.name + " " + fixed(100.0 * c.time_s / o.top[i].report.step_time_s, 0) + "% (" + limit_text(c.bound) + ")";
        shares.add_row({std::to_string(i + 1), line});
    }
    text += shares.render() + "\n";
    Table front({"memory", "step", "degrees", "knobs"});
    for (const SearchedPlan& p : r.pareto)
        front.add_row({si(p.memory_bytes, "B"), seconds(p.step_time_s), degrees_text(p), knobs_text(p)});
    text += "Pareto front: step time vs memory per chip\n" + front.render() + "\n";
    return text + "the best plan in full:\n" + training_table(o.top.front().scenario, o.top.front().report, o.train_tokens);
}

std::string train_search_json(const TrainSearchOutcome& o) {
    const TrainSearchResult& r = o.result;
    nlohmann::json doc;
    doc["schema"] = "ridgeline.search-train/1";
    doc["model"] = o.spec.model.name;
    doc["chip"] = o.spec.chip.name;
    doc["chips"] = o.spec.cluster.chips();
    doc["seq_len"] = o.spec.seq_len;
    doc["global_batch_seqs"] = o.spec.global_batch_seqs;
    doc["plans_evaluated"] = r.plans_evaluated;
    doc["plans_valid"] = r.plans_valid();
    doc["rejected"] = rejections_document(r);
    doc["rejection_examples"] = rejection_examples_document(r);
    doc["elapsed_s"] = o.elapsed_s;
    doc["threads"] = o.threads;
    doc["top"] = nlohmann::json::array();
    for (const PlanWithReport& p : o.top)
        doc["top"].push_back({{"plan", plan_document(p.plan)}, {"report", training_document(p.scenario, p.report, o.train_tokens)}});
    doc["pareto"] = nlohmann::json::array();
    for (const SearchedPlan& p : r.pareto)
        doc["pareto"].push_back({{"plan", plan_document(p)}, {"step_time_s", p.step_time_s}, {"memory_bytes", p.memory_bytes}});
    return doc.dump(2);
}

namespace {

// A count's time to train scales with its step time, so its interval is the step's.
std::string days_range(const ScalingPoint& p) {
    const std::optional<PredictionInterval>& i = p.best->report.interval;
    if (!i || !i->available) return "none";
    return fixed(p.time_to_train_s * i->low_factor / 86400.0, 2) + " - " + fixed(p.time_to_train_s * i->high_factor / 86400.0, 2) + " days";
}

}  // namespace

std::string scaling_table(const ScalingOutcome& o) {
    // A deadline under 0.01 days would print as "0.00 days".
    const std::string days = !o.deadline_s ? "" : *o.deadline_s >= 864.0 ? fixed(*o.deadline_s / 86400.0, 2) + " days" : seconds(*o.deadline_s);
    std::string text = (o.deadline_s ? "Fewest chips to train " + o.model_name + " on " + o.chip_name + " within " + days + ", " +
                                           si(o.train_tokens) + " tokens (" + fixed(o.elapsed_s, 2) + " s); the counts searched:\n\n"
                                     : "Strong scaling: " + o.model_name + " on " + o.chip_name + ", " + si(o.train_tokens) +
                                           " tokens, objective " + o.objective + " (" + fixed(o.elapsed_s, 2) + " s)\n\n");
    Table table({"chips", "valid plans", "best plan", "MFU", "time to train", "90% range", "goodput", "with failures", "cost",
                 "speedup per doubling", "front"});
    const ScalingPoint* previous = nullptr;
    for (const ScalingPoint& p : o.points) {
        if (!p.best) {
            table.add_row({std::to_string(p.chips), "0", "nothing fits", "-", "-", "-", "-", "-", "-", "-", ""});
            continue;
        }
        std::string speedup = "-";
        if (previous != nullptr && previous->best)
            speedup = fixed(previous->time_to_train_s / p.time_to_train_s, 2) + "x";
        table.add_row({std::to_string(p.chips), count_text(p.result.plans_valid()), degrees_text(p.best->plan),
                       fixed(100.0 * p.best->report.mfu, 1) + "%", fixed(p.time_to_train_s / 86400.0, 2) + " days", days_range(p),
                       p.goodput ? fixed(100.0 * *p.goodput, 1) + "%" : "-", !p.goodput ? "-" : std::isfinite(p.wall_s) ? fixed(p.wall_s / 86400.0, 2) + " days" : "never ends",
                       p.cost_usd ? "$" + si(*p.cost_usd) : "-", speedup, p.on_front ? "*" : ""});
        previous = &p;
    }
    text += table.render() + "\n* on the front: no count tried beats it on both time to train and cost.\n";
    if (o.deadline_s) {
        // Wall-clock time: with failures and checkpoints where the system says enough, else the steps alone.
        if (o.chosen_chips == 0) return text + "no chip count fits";
        if (o.deadline_met) return text + "fewest chips that finish within " + days + ": " + std::to_string(o.chosen_chips);
        return text + "no count searched finishes within " + days + "; the fastest: " + std::to_string(o.chosen_chips) + " chips";
    }
    return text + (o.chosen_chips > 0 ? "best under objective " + o.objective + ": " + std::to_string(o.chosen_chips) + " chips"
                                      : std::string("no chip count fits"));
}

std::string scaling_json(const ScalingOutcome& o) {
    nlohmann::json doc;
    doc["schema"] = "ridgeline.search-scaling/1";
    doc["model"] = o.model_name;
    doc["chip"] = o.chip_name;
    doc["objective"] = o.objective;
    doc["train_tokens"] = o.train_tokens;
    doc["elapsed_s"] = o.elapsed_s;
    doc["chosen_chips"] = o.chosen_chips;
    if (o.deadline_s) {
        doc["deadline_s"] = *o.deadline_s;
        doc["deadline_met"] = o.deadline_met;
    }
    doc["points"] = nlohmann::json::array();
    for (const ScalingPoint& p : o.points) {
        nlohmann::json point = {{"chips", p.chips}, {"plans_evaluated", p.result.plans_evaluated},
                                {"plans_valid", p.result.plans_valid()}, {"rejected", rejections_document(p.result)},
                                {"on_front", p.on_front}};
        if (p.best) {
            point["plan"] = plan_document(p.best->plan);
            point["step_time_s"] = p.best->report.step_time_s;
            point["mfu"] = p.best->report.mfu;
            point["memory_bytes"] = p.best->report.memory.total_bytes();
            point["time_to_train_s"] = p.time_to_train_s;
            if (p.best->report.interval) point["time_to_train_interval"] = time_interval_json(p.time_to_train_s, *p.best->report.interval);
            if (p.cost_usd) point["cost_usd"] = *p.cost_usd;
            if (p.goodput) point["goodput"] = *p.goodput;
            point["wall_clock_s"] = std::isfinite(p.wall_s) ? nlohmann::json(p.wall_s) : nlohmann::json(nullptr);  // null: never ends
        }
        doc["points"].push_back(point);
    }
    return doc.dump(2);
}

}  // namespace ridgeline::report
