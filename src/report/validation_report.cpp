#include <nlohmann/json.hpp>

#include "report/bound_text.hpp"
#include "report/reports.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {
std::string percent(double fraction) { return (fraction >= 0 ? "+" : "") + fixed(100.0 * fraction, 1) + "%"; }
nlohmann::json summary_json(const ErrorSummary& s) {
    return {{"count", s.count}, {"median_abs_error", s.median_abs_error}, {"p90_abs_error", s.p90_abs_error}};
}
}  // namespace

std::string validation_table(const ValidationResult& v) {
    Table records({"record", "predicted tokens/s", "measured tokens/s", "error", "bound"});
    Table serving({"serving record", "batch", "predicted output tokens/s", "measured output tokens/s", "error", "decode bound"});
    Table skipped({"skipped record", "reason"});
    for (const auto& r : v.records) {
        if (!r.ok) skipped.add_row({r.id, r.reason});
        else if (r.kind == "serve")
            serving.add_row({r.id, fixed(r.batch_seqs, 0), si(r.predicted_output_tokens_per_s), si(r.measured_output_tokens_per_s),
                             percent(r.error), limit_text(r.bound)});
        else records.add_row({r.id, si(r.predicted_tokens_per_s), si(r.measured_tokens_per_s), percent(r.error), limit_text(r.bound)});
    }
    std::string text;
    if (v.overall.count > 0) text += records.render() + "\n";
    if (v.serve.count > 0) text += serving.render() + "\n";
    if (v.skipped > 0) text += skipped.render() + "\n";
    Table summary({"source", "records", "median |error|", "p90 |error|"});
    for (const auto& [source, s] : v.by_source)
        summary.add_row({source, std::to_string(s.count), fixed(100.0 * s.median_abs_error, 1) + "%", fixed(100.0 * s.p90_abs_error, 1) + "%"});
    if (v.serve.count > 0)
        summary.add_row({"serving records", std::to_string(v.serve.count), fixed(100.0 * v.serve.median_abs_error, 1) + "%",
                         fixed(100.0 * v.serve.p90_abs_error, 1) + "%"});
    if (v.overall.count > 0 || v.serve.count == 0)
        summary.add_row({"all training", std::to_string(v.overall.count), fixed(100.0 * v.overall.median_abs_error, 1) + "%",
                     fixed(100.0 * v.overall.p90_abs_error, 1) + "%"});
    return text + summary.render() + std::to_string(v.skipped) + " skipped\n";
}

std::string validation_json(const ValidationResult& v) {
    nlohmann::json doc;
    doc["schema"] = "ridgeline.validation/1";
    doc["records"] = nlohmann::json::array();
    for (const auto& r : v.records) {
        nlohmann::json record = {{"id", r.id}, {"kind", r.kind}, {"source", r.source}, {"status", r.ok ? "ok" : "skipped"}};
        if (r.ok && r.kind == "serve") {
            record["predicted_output_tokens_per_s"] = r.predicted_output_tokens_per_s;
            record["measured_output_tokens_per_s"] = r.measured_output_tokens_per_s;
            record["error"] = r.error;
            record["batch_seqs"] = r.batch_seqs;
            record["bound"] = limit_text(r.bound);
        } else if (r.ok) {
            record["predicted_tokens_per_s"] = r.predicted_tokens_per_s;
            record["measured_tokens_per_s"] = r.measured_tokens_per_s;
            record["error"] = r.error;
            record["predicted_mfu"] = r.predicted_mfu;
            record["bound"] = limit_text(r.bound);
        } else {
            record["reason"] = r.reason;
            if (r.measured_tokens_per_s > 0) record["measured_tokens_per_s"] = r.measured_tokens_per_s;
            if (r.measured_output_tokens_per_s > 0) record["measured_output_tokens_per_s"] = r.measured_output_tokens_per_s;
        }
        doc["records"].push_back(record);
    }
    nlohmann::json summary = summary_json(v.overall);
    summary["skipped"] = v.skipped;
    summary["by_source"] = nlohmann::json::object();
    for (const auto& [source, s] : v.by_source) summary["by_source"][source] = summary_json(s);
    summary["serve"] = summary_json(v.serve);
    doc["summary"] = summary;
    return doc.dump(2);
}

}  // namespace ridgeline::report
