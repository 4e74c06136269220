#include "report/html/html_report.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/version.hpp"
#include "report/html/svg_plot.hpp"
#include "report/table.hpp"

namespace ridgeline::html {

namespace {

using nlohmann::json;

constexpr const char* kStyle = R"(
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;margin:0 auto;max-width:980px;padding:12px 16px}
h1{font-size:1.45em;margin:.4em 0}h2{font-size:1.15em;margin:1.4em 0 .4em;border-bottom:1px solid #ddd}
.meta{color:#555}.facts{display:flex;flex-wrap:wrap;gap:8px 22px;padding:0;list-style:none}.facts b{display:block;font-size:1.25em}
figure{margin:.6em 0}svg.chart{width:100%;height:auto;max-width:760px;font-size:12px}
svg .title{font-weight:600;font-size:14px}svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#888}svg .label{fill:#333}
svg .diagonal{stroke:#888;stroke-dasharray:4 3}svg .limit{stroke:#c00;stroke-width:2;stroke-dasharray:6 3}svg .limit-label{fill:#c00}
svg .highlight circle{fill:none;stroke:#000;stroke-width:2}svg polyline{stroke-width:1.8}
table{border-collapse:collapse;margin:.4em 0;font-size:.92em;display:block;overflow-x:auto}th,td{padding:3px 9px;border-bottom:1px solid #e4e4e4;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:-.05em}
footer{color:#777;font-size:.85em;margin-top:2em}p.legend{font-size:.9em;margin:.2em 0}.key{white-space:nowrap;margin-right:.9em}
@media print{body{max-width:none;font-size:11pt}h2{break-after:avoid}figure,table{break-inside:avoid}}
)";

std::string text(const json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_null()) return "-";
    if (value.is_number_float()) {
        const double v = value.get<double>();
        if (std::fabs(v) >= 1e4) return report::si(v);
        if (v == std::floor(v)) return std::to_string(static_cast<long long>(v));
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.4g", v);
        return buffer;
    }
    return value.dump();
}

double number(const json& doc, const char* key, double fallback = 0) {
    const auto it = doc.find(key);
    return it != doc.end() && it->is_number() ? it->get<double>() : fallback;
}

// The colour of what bounds a part: the bound's family, whatever level it names.
std::string bound_color(const std::string& bound) {
    static const std::map<std::string, std::string> kColors = {
        {"compute", "#6a3d9a"}, {"memory", "#e31a1c"}, {"latency", "#ff7f00"}, {"pipeline", "#33a02c"}, {"host", "#b15928"}};
    for (const auto& [family, color] : kColors)
        if (bound.rfind(family, 0) == 0) return color;
    return "#1f78b4";  // a network level: nvlink, ib, ici, ...
}

struct Page {
    std::string title, body;
    void facts(const std::vector<std::pair<std::string, std::string>>& items) {
        body += "<ul class=\"facts\">";
        for (const auto& [label, value] : items) body += "<li>" + escape(label) + "<b>" + escape(value) + "</b></li>";
        body += "</ul>\n";
    }
    void section(const std::string& heading) { body += "<h2>" + escape(heading) + "</h2>\n"; }
    void figure(const std::string& svg, const std::string& caption) {
        body += "<figure>" + svg + "<figcaption>" + escape(caption) + "</figcaption></figure>\n";
    }
    void figure(const Plot& plot, const std::string& caption) {
        body += "<figure>" + svg_plot(plot) + plot_legend(plot) + "<figcaption>" + escape(caption) + "</figcaption></figure>\n";
    }
    void table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
        body += "<table><thead><tr>";
        for (const std::string& h : head) body += "<th>" + escape(h) + "</th>";
        body += "</tr></thead><tbody>\n";
        for (const auto& row : rows) {
            body += "<tr>";
            for (const std::string& cell : row) {
                const bool numeric = !cell.empty() && (std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '-' || cell[0] == '+');
                body += std::string(numeric ? "<td class=\"n\">" : "<td>") + escape(cell) + "</td>";
            }
            body += "</tr>\n";
        }
        body += "</tbody></table>\n";
    }
    [[nodiscard]] std::string render(const std::string& schema) const {
        return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
               "<title>" + escape(title) + "</title><style>" + kStyle + "</style></head>\n<body>\n<h1>" + escape(title) + "</h1>\n" + body +
               "<footer>Written by ridgeline " + escape(ridgeline_version()) + " from its " + escape(schema) +
               " document (the same numbers --json prints).</footer>\n</body></html>\n";
    }
};

std::string plan_text(const json& plan) {
    std::string out;
    if (plan.contains("axes"))
        for (const auto& [axis, size] : plan.at("axes").items())
            if (size.is_number() && size.get<double>() > 1) out += (out.empty() ? "" : " x ") + axis + " " + text(size);
    for (const char* key : {"tp", "pp", "dp", "ep"})
        if (plan.contains(key) && plan.at(key).is_number() && plan.at(key).get<double>() > 1)
            out += (out.empty() ? "" : " x ") + std::string(key) + " " + text(plan.at(key));
    return out.empty() ? "one chip's worth of everything" : out;
}

void training_page(const json& d, Page& page) {
    page.title = text(d.at("model")) + " training on " + text(d.at("chips")) + " x " + text(d.at("chip"));
    page.body += "<p class=\"meta\">" + escape(text(d.at("cluster")) + ", plan " + plan_text(d.at("plan")) + ", strategy " + text(d.value("strategy", json()))) +
                 "</p>\n";
    std::vector<std::pair<std::string, std::string>> facts = {
        {"step time", report::seconds(number(d, "step_time_s"))}, {"MFU", report::fixed(100 * number(d, "mfu"), 1) + "%"},
        {"tokens/s", report::si(number(d, "tokens_per_s"))}, {"memory per chip", report::si(number(d, "memory_per_chip_bytes"), "B")},
        {"fits", d.value("fits", false) ? "yes" : "no"}};
    if (d.contains("time_to_train_s")) facts.push_back({"time to train", report::fixed(number(d, "time_to_train_s") / 86400, 1) + " days"});
    page.facts(facts);
    page.section("Where the step goes");
    std::vector<Bar> parts;
    std::map<std::string, std::string> legend;
    for (const json& part : d.at("breakdown")) {
        const double time_s = part.at("time_s").get<double>();
        if (time_s <= 0) continue;
        const std::string bound = text(part.at("bound"));
        parts.push_back({text(part.at("name")), time_s, bound_color(bound)});
        legend[bound] = bound_color(bound);
    }
    page.figure(svg_bars("Step time by component, coloured by what bounds it", "seconds per step", parts),
                "Each bar is one part of the step; the colours are the bounds.");
    std::string key;
    for (const auto& [bound, color] : legend)
        key += "<span class=\"key\"><span class=\"swatch\" style=\"background:" + color + "\"></span>" + escape(bound) + "</span> ";
    page.body += "<p class=\"legend\">" + key + "</p>\n";
    page.section("Memory per chip");
    const json& m = d.at("memory");
    std::vector<Bar> memory;
    for (const auto& [name, label] : std::vector<std::pair<std::string, std::string>>{{"parameters_bytes", "parameters"},
                                                                                      {"gradients_bytes", "gradients"},
                                                                                      {"optimizer_bytes", "optimizer state"},
                                                                                      {"activations_bytes", "activations"},
                                                                                      {"buffers_bytes", "buffers"}})
        memory.push_back({label, number(m, name.c_str()) / 1e9, "#1f78b4"});
    memory.push_back({"total", number(d, "memory_per_chip_bytes") / 1e9, d.value("fits", false) ? "#33a02c" : "#e31a1c"});
    page.figure(svg_bars("Memory per chip against its capacity", "GB per chip", memory, number(m, "hbm_bytes") / 1e9, "capacity"),
                "The dashed line is the chip's memory; the total bar is green when the plan fits.");
    page.section("Plan");
    std::vector<std::vector<std::string>> rows;
    for (const auto& [knob, value] : d.at("plan").items())
        if (!value.is_object()) rows.push_back({knob, text(value)});
    page.table({"knob", "value"}, rows);
}

void serving_page(const json& d, Page& page) {
    page.title = text(d.at("model")) + " serving on " + text(d.at("chips")) + " x " + text(d.at("chip"));
    page.body += "<p class=\"meta\">" + escape(text(d.at("cluster")) + ", plan " + plan_text(d.at("plan")) + ", " + text(d.at("input_len")) +
                                          " tokens in, " + text(d.at("output_len")) + " out") + "</p>\n";
    const json curve = d.value("curve", json());
    if (curve.is_object() && curve.contains("points")) {
        PlotSeries fits{"fits in memory", "#1f78b4", {}, true, false};
        PlotSeries over{"does not fit", "#e31a1c", {}, false, true};
        std::optional<std::pair<double, double>> critical;
        const json critical_batch = curve.value("critical_batch_seqs", json());
        for (const json& p : curve.at("points")) {
            const std::pair<double, double> xy{p.at("tokens_per_s_per_user").get<double>(), p.at("output_tokens_per_s_per_chip").get<double>()};
            (p.value("fits", false) ? fits : over).points.push_back(xy);
            if (critical_batch.is_number() && p.at("batch_seqs") == critical_batch) critical = xy;
        }
        std::vector<PlotSeries> series{fits};
        if (!over.points.empty()) series.push_back(over);
        Plot plot{"Decode latency against throughput, one point per batch size", {"output tokens/s per user", false},
                  {"output tokens/s per chip", true}, series, critical,
                  critical ? "critical batch " + text(critical_batch) : "", false};
        page.section("The latency-throughput curve");
        page.figure(plot, "Batches from the range given; the ring marks the critical batch, past which decode turns compute-bound.");
    }
    page.section("At the batch given");
    page.facts({{"batch", text(d.at("batch_seqs"))}, {"TTFT", report::seconds(number(d.at("prefill"), "time_s"))},
                {"output tokens/s", report::si(number(d.at("throughput"), "output_tokens_per_s"))}, {"fits", d.value("fits", false) ? "yes" : "no"}});
    const json load = d.value("load", json());
    if (load.is_object()) {
        PlotSeries running{"running", "#1f78b4", {}, true, false};
        PlotSeries waiting{"waiting", "#e31a1c", {}, true, true};
        for (const json& q : load.at("queue").at("samples")) {
            running.points.emplace_back(q.at(0).get<double>(), q.at(2).get<double>());
            waiting.points.emplace_back(q.at(0).get<double>(), q.at(1).get<double>());
        }
        Plot plot{"Requests on one replica over the run", {"time (s)", false}, {"requests", false}, {running, waiting}, std::nullopt, "", false};
        page.section("Under load, on " + text(load.at("engine").at("name")) + "'s scheduler");
        page.figure(plot, "Requests running (decoding or prefilling) and waiting for room, sampled over the simulated run.");
        const json& ttft = load.at("ttft_s");
        const json& tpot = load.at("tpot_s");
        page.facts({{"requests", text(load.at("requests"))},
                    {"TTFT p50 / p99", report::seconds(number(ttft, "p50")) + " / " + report::seconds(number(ttft, "p99"))},
                    {"TPOT p50 / p99", report::seconds(number(tpot, "p50")) + " / " + report::seconds(number(tpot, "p99"))},
                    {"output tokens/s", report::si(number(load, "output_tokens_per_s"))},
                    {"preemptions", text(load.at("preemptions"))}});
    }
}

void front_table(Page& page, const json& plans, const std::vector<std::pair<std::string, std::string>>& columns) {
    std::vector<std::string> head = {"plan"};
    for (const auto& c : columns) head.push_back(c.second);
    std::vector<std::vector<std::string>> rows;
    for (const json& p : plans) {
        std::vector<std::string> row = {plan_text(p.at("plan"))};
        for (const auto& c : columns) row.push_back(p.contains(c.first) ? text(p.at(c.first)) : "-");
        rows.push_back(row);
    }
    page.table(head, rows);
}

void rejections(Page& page, const json& d) {
    if (!d.contains("rejected")) return;
    std::vector<std::vector<std::string>> rows;
    for (const auto& [reason, count] : d.at("rejected").items())
        if (count.is_number() && count.get<double>() > 0) {
            const json examples = d.value("rejection_examples", json::object());
            rows.push_back({reason, text(count), examples.contains(reason) ? text(examples.at(reason)) : ""});
        }
    page.section("Plans rejected, and why");
    page.table({"reason", "plans", "example"}, rows);
}

void search_train_page(const json& d, Page& page) {
    page.title = "Search: " + text(d.at("model")) + " on " + text(d.at("chips")) + " x " + text(d.at("chip"));
    page.facts({{"plans evaluated", report::si(number(d, "plans_evaluated"))}, {"valid", report::si(number(d, "plans_valid"))},
                {"search time", report::seconds(number(d, "elapsed_s"))}});
    PlotSeries front{"Pareto front", "#1f78b4", {}, true, false};
    for (const json& p : d.at("pareto")) front.points.push_back({p.at("memory_bytes").get<double>() / 1e9, p.at("step_time_s").get<double>()});
    std::optional<std::pair<double, double>> chosen;
    if (!d.at("top").empty()) {
        const json& best = d.at("top").front().at("report");
        chosen = std::pair<double, double>{number(best, "memory_per_chip_bytes") / 1e9, number(best, "step_time_s")};
    }
    page.section("Step time against memory");
    page.figure(Plot{"The Pareto front of the valid plans", {"memory per chip (GB)", false}, {"step time (s)", false}, {front}, chosen,
                          "chosen plan", false},
                "Each point is a plan no other beats on both step time and memory; the ring is the fastest plan.");
    page.section("Pareto front");
    front_table(page, d.at("pareto"), {{"step_time_s", "step time (s)"}, {"memory_bytes", "memory per chip (B)"}});
    rejections(page, d);
}

void search_scaling_page(const json& d, Page& page) {
    page.title = "Search across chip counts: " + text(d.at("model")) + " on " + text(d.at("chip"));
    PlotSeries time{"time to train", "#1f78b4", {}, true, false};
    PlotSeries mfu{"MFU", "#6a3d9a", {}, true, false};
    std::optional<std::pair<double, double>> chosen;
    for (const json& p : d.at("points")) {
        if (!p.contains("plan")) continue;
        const double chips = p.at("chips").get<double>(), days = number(p, "time_to_train_s") / 86400;
        time.points.push_back({chips, days});
        mfu.points.push_back({chips, 100 * number(p, "mfu")});
        if (p.at("chips") == d.value("chosen_chips", json())) chosen = std::pair<double, double>{chips, days};
    }
    page.facts({{"objective", text(d.value("objective", json()))}, {"chosen", text(d.value("chosen_chips", json())) + " chips"}});
    page.section("The scaling curve");
    page.figure(Plot{"Days to train against chips, the best plan at each count", {"chips", true}, {"days to train", true}, {time}, chosen,
                          "chosen", false},
                "One point per chip count searched; the ring is the count the objective chose.");
    page.figure(Plot{"MFU of the best plan at each count", {"chips", true}, {"MFU (%)", false}, {mfu}, std::nullopt, "", false},
                "MFU falls where communication and synchronisation grow with the chips.");
    front_table(page, d.at("points"), {{"chips", "chips"}, {"step_time_s", "step time (s)"}, {"mfu", "MFU"}, {"time_to_train_s", "time to train (s)"},
                                       {"cost_usd", "cost (USD)"}});
}

void search_serve_page(const json& d, Page& page) {
    page.title = "Serving search: " + text(d.at("model")) + " on " + text(d.at("chip"));
    PlotSeries front{"Pareto front", "#1f78b4", {}, true, false};
    for (const json& p : d.at("pareto")) front.points.push_back({number(p, "tokens_per_s_per_user"), number(p, "output_tokens_per_s_per_chip")});
    std::optional<std::pair<double, double>> chosen;
    const json best = d.value("best", json());  // the best configurations, first the one chosen
    if (best.is_array() && !best.empty())
        chosen = std::pair<double, double>{number(best.front(), "tokens_per_s_per_user"), number(best.front(), "output_tokens_per_s_per_chip")};
    page.facts({{"configurations evaluated", text(d.value("evaluated", json()))}, {"meeting the SLO", text(d.value("meeting_slo", json()))}});
    page.section("Throughput against latency");
    page.figure(Plot{"The Pareto front of the configurations meeting the SLO", {"output tokens/s per user", false},
                          {"output tokens/s per chip", true}, {front}, chosen, "chosen", false},
                "Each point is a configuration no other beats on both; the ring is the one the objective chose.");
    front_table(page, d.at("pareto"), {{"chips", "chips"}, {"batch_seqs", "batch"}, {"tokens_per_s_per_user", "tokens/s per user"},
                                       {"output_tokens_per_s_per_chip", "tokens/s per chip"}, {"cost_per_million_output_tokens_usd", "USD per M tokens"}});
}

void validation_page(const json& d, Page& page) {
    page.title = "Validation against published runs";
    const json& s = d.at("summary");
    page.facts({{"records", text(s.at("count"))}, {"median |error|", report::fixed(100 * number(s, "median_abs_error"), 2) + "%"},
                {"p90 |error|", report::fixed(100 * number(s, "p90_abs_error"), 2) + "%"}});
    static const std::vector<std::string> kPalette = {"#1f78b4", "#e31a1c", "#33a02c", "#6a3d9a", "#ff7f00", "#b15928", "#a6cee3", "#fb9a99",
                                                      "#b2df8a", "#cab2d6", "#fdbf6f", "#999999"};
    std::map<std::string, PlotSeries> by_source;
    for (const json& r : d.at("records")) {
        if (r.value("status", "") != "ok" || !r.contains("measured_tokens_per_s")) continue;
        PlotSeries& series = by_source[text(r.at("source"))];
        series.label = text(r.at("source"));
        series.points.push_back({number(r, "measured_tokens_per_s"), number(r, "predicted_tokens_per_s")});
    }
    std::vector<PlotSeries> series;
    for (auto& [source, one] : by_source) {
        one.color = kPalette[series.size() % kPalette.size()];
        series.push_back(one);
    }
    page.section("Predicted against measured");
    page.figure(Plot{"Tokens/s, predicted against measured", {"measured tokens/s", true}, {"predicted tokens/s", true}, series, std::nullopt, "",
                          true},
                "Points on the dashed line are predicted exactly; above it, predicted faster than measured.");
    std::vector<std::vector<std::string>> rows;
    const json by_source_stats = s.value("by_source", json::object());
    for (const auto& [source, stats] : by_source_stats.items())
        rows.push_back({source, text(stats.at("count")), report::fixed(100 * number(stats, "median_abs_error"), 2) + "%",
                        report::fixed(100 * number(stats, "p90_abs_error"), 2) + "%"});
    page.section("By source");
    page.table({"source", "records", "median |error|", "p90 |error|"}, rows);
}

}  // namespace

std::string html_report(const json& document) {
    const std::string schema = document.value("schema", "");
    Page page;
    if (schema == "ridgeline.train/1") training_page(document, page);
    else if (schema == "ridgeline.serve/1") serving_page(document, page);
    else if (schema == "ridgeline.search-train/1") search_train_page(document, page);
    else if (schema == "ridgeline.search-scaling/1") search_scaling_page(document, page);
    else if (schema == "ridgeline.serve-search/1") search_serve_page(document, page);
    else if (schema == "ridgeline.validation/1") validation_page(document, page);
    else throw InputError("--html", "", "no page is drawn for " + (schema.empty() ? std::string("this output") : schema));
    return page.render(schema);
}

}  // namespace ridgeline::html
