#include <nlohmann/json.hpp>

#include "report/bound_text.hpp"
#include "report/json_documents.hpp"
#include "report/reports.hpp"
#include "report/table.hpp"
#include "report/interval_text.hpp"

namespace ridgeline::report {

namespace {

std::vector<std::string> candidate_row(const ServeCandidate& c) {
    return {std::to_string(c.chips),
            std::to_string(c.plan.tp) + "/" + std::to_string(c.plan.pp) + "/" + std::to_string(c.plan.ep) + "/" +
                std::to_string(c.plan.dp),
            std::string(dtype_name(c.plan.weights)) + "/" + std::string(dtype_name(c.plan.kv_cache)),
            fixed(c.batch_seqs, 0),
            seconds(c.ttft_s),
            seconds(c.tpot_s),
            si(c.output_tokens_per_s_per_chip),
            fixed(c.tokens_per_s_per_user, 1),
            c.cost_per_million_output_tokens_usd ? "$" + fixed(*c.cost_per_million_output_tokens_usd, 3) : "-",
            limit_text(c.decode_bound)};
}

const std::vector<std::string> kHeaders = {"chips", "tp/pp/ep/dp", "weights/KV", "batch", "TTFT", "TPOT",
                                           "tok/s/chip", "tok/s/user", "$/M tokens", "decode bound"};

nlohmann::json candidate_json(const ServeCandidate& c) {
    return {{"chips", c.chips},
            {"plan", serving_plan_json(c.plan)},
            {"batch_seqs", c.batch_seqs},
            {"ttft_s", c.ttft_s},
            {"tpot_s", c.tpot_s},
            {"output_tokens_per_s", c.output_tokens_per_s},
            {"output_tokens_per_s_per_chip", c.output_tokens_per_s_per_chip},
            {"tokens_per_s_per_user", c.tokens_per_s_per_user},
            {"cost_per_million_output_tokens_usd",
             c.cost_per_million_output_tokens_usd ? nlohmann::json(*c.cost_per_million_output_tokens_usd) : nlohmann::json(nullptr)},
            {"memory_per_chip_bytes", c.memory_per_chip_bytes},
            {"decode_bound", limit_text(c.decode_bound)},
            {"meets_slo", c.meets_slo}};
}

}  // namespace

std::string serve_search_table(const ServeSearchSpace& space, const ServeSearchResult& r, const std::vector<PredictionInterval>& intervals) {
    std::string text = "Serving search: " + space.model.name + " on " + space.hardware.chip.name + ", prompt " +
                       fixed(space.input_len, 0) + ", output " + fixed(space.output_len, 0) + ", SLO TTFT <= " +
                       seconds(space.slo_ttft_s) + ", TPOT <= " + seconds(space.slo_tpot_s) + ", objective " +
                       objective_name(space.objective) + "\n" + std::to_string(r.evaluated) + " evaluated, " +
                       std::to_string(r.fitting) + " fit in memory, " + std::to_string(r.meeting_slo) + " meet the SLOs\n\n";
    if (r.best.empty()) {
        text += "no configuration meets the SLOs\n";
    } else {
        std::vector<std::string> headers = kHeaders;
        if (!intervals.empty()) headers.push_back("90% output tokens/s");
        Table best(headers);
        for (std::size_t i = 0; i < r.best.size(); ++i) {
            auto row = candidate_row(r.best[i]);
            if (!intervals.empty()) row.push_back(throughput_range_text(r.best[i].output_tokens_per_s, intervals[i]));
            best.add_row(row);
        }
        text += "best meeting the SLOs:\n" + best.render();
        // Every row's interval comes from the same held-out runs unless the chip counts set them apart.
        if (!intervals.empty() && intervals.front().available)
            text += "intervals from " + std::to_string(intervals.front().runs) + " held-out serving runs like the first: " +
                    intervals.front().like + "\n";
        else if (!intervals.empty())
            text += "throughput interval: " + intervals.front().why_none + "\n";
    }
    Table pareto(kHeaders);
    for (const ServeCandidate& c : r.pareto) {
        auto row = candidate_row(c);
        row.back() += c.meets_slo ? "" : " (misses SLO)";
        pareto.add_row(row);
    }
    return text + "\nPareto front (throughput per chip vs tokens/s per user):\n" + pareto.render();
}

std::string serve_search_json(const ServeSearchSpace& space, const ServeSearchResult& r, const std::vector<PredictionInterval>& intervals) {
    nlohmann::json doc;
    doc["schema"] = "ridgeline.serve-search/1";
    doc["model"] = space.model.name;
    doc["chip"] = space.hardware.chip.name;
    doc["chip_counts"] = space.chip_counts;
    doc["input_len"] = space.input_len;
    doc["output_len"] = space.output_len;
    doc["slo"] = {{"ttft_s", space.slo_ttft_s}, {"tpot_s", space.slo_tpot_s}};
    doc["objective"] = objective_name(space.objective);
    doc["evaluated"] = r.evaluated;
    doc["fitting"] = r.fitting;
    doc["meeting_slo"] = r.meeting_slo;
    doc["best"] = nlohmann::json::array();
    for (std::size_t i = 0; i < r.best.size(); ++i) {
        doc["best"].push_back(candidate_json(r.best[i]));
        if (!intervals.empty()) doc["best"].back()["output_tokens_per_s_interval"] = throughput_interval_json(r.best[i].output_tokens_per_s, intervals[i]);
    }
    doc["pareto"] = nlohmann::json::array();
    for (const ServeCandidate& c : r.pareto) doc["pareto"].push_back(candidate_json(c));
    return doc.dump(2);
}

}  // namespace ridgeline::report
