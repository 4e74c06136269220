#include <nlohmann/json.hpp>

#include "report/bound_text.hpp"
#include "report/reports.hpp"
#include "report/table.hpp"

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
            {"plan", {{"tp", c.plan.tp}, {"pp", c.plan.pp}, {"ep", c.plan.ep}, {"dp", c.plan.dp},
                      {"weights_dtype", dtype_name(c.plan.weights)}, {"kv_dtype", dtype_name(c.plan.kv_cache)}}},
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

std::string serve_search_table(const ServeSearchSpace& space, const ServeSearchResult& r) {
    std::string text = "Serving search: " + space.model.name + " on " + space.hardware.chip.name + ", prompt " +
                       fixed(space.input_len, 0) + ", output " + fixed(space.output_len, 0) + ", SLO TTFT <= " +
                       seconds(space.slo_ttft_s) + ", TPOT <= " + seconds(space.slo_tpot_s) + ", objective " +
                       objective_name(space.objective) + "\n" + std::to_string(r.evaluated) + " evaluated, " +
                       std::to_string(r.fitting) + " fit in memory, " + std::to_string(r.meeting_slo) + " meet the SLOs\n\n";
    if (r.best.empty()) {
        text += "no configuration meets the SLOs\n";
    } else {
        Table best(kHeaders);
        for (const ServeCandidate& c : r.best) best.add_row(candidate_row(c));
        text += "best meeting the SLOs:\n" + best.render();
    }
    Table pareto(kHeaders);
    for (const ServeCandidate& c : r.pareto) {
        auto row = candidate_row(c);
        row.back() += c.meets_slo ? "" : " (misses SLO)";
        pareto.add_row(row);
    }
    return text + "\nPareto front (throughput per chip vs tokens/s per user):\n" + pareto.render();
}

std::string serve_search_json(const ServeSearchSpace& space, const ServeSearchResult& r) {
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
    for (const ServeCandidate& c : r.best) doc["best"].push_back(candidate_json(c));
    doc["pareto"] = nlohmann::json::array();
    for (const ServeCandidate& c : r.pareto) doc["pareto"].push_back(candidate_json(c));
    return doc.dump(2);
}

}  // namespace ridgeline::report
