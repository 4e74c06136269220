#include <nlohmann/json.hpp>

#include "report/bound_text.hpp"
#include "report/reports.hpp"
#include "report/table.hpp"
#include "validation/cross_validate.hpp"

namespace ridgeline::report {

namespace {
std::string percent(double fraction) { return (fraction >= 0 ? "+" : "") + fixed(100.0 * fraction, 1) + "%"; }
nlohmann::json summary_json(const ErrorSummary& s) {
    return {{"count", s.count}, {"median_abs_error", s.median_abs_error}, {"p90_abs_error", s.p90_abs_error}};
}
}  // namespace

std::string validation_table(const ValidationResult& v) {
    Table records({"record", "predicted tokens/s", "measured tokens/s", "error", "bound"});
    Table serving({"serving record", "batch", "predicted output tokens/s", "measured output tokens/s", "error", "TTFT error", "ITL error",
                   "decode bound", "simulated on"});
    const auto latency_error = [](const std::optional<RecordResult::Latency>& l) {
        return l ? percent(l->error()) + " (" + l->statistic + ")" : std::string("-");
    };
    Table skipped({"skipped record", "reason"});
    for (const auto& r : v.records) {
        if (!r.ok) skipped.add_row({r.id, r.reason});
        else if (r.kind == "serve")
            serving.add_row({r.id, fixed(r.batch_seqs, 0), si(r.predicted_output_tokens_per_s), si(r.measured_output_tokens_per_s),
                             percent(r.error), latency_error(r.ttft), latency_error(r.itl), limit_text(r.bound),
                             r.engine.empty() ? "static batch" : r.engine});
        else records.add_row({r.id, si(r.predicted_tokens_per_s), si(r.measured_tokens_per_s), percent(r.error), limit_text(r.bound)});
    }
    std::string text;
    if (v.overall.count > 0) text += records.render() + "\n";
    if (v.serve.count > 0) text += serving.render() + "\n";
    if (v.skipped > 0) text += skipped.render() + "\n";
    Table summary({"source", "records", "median |error|", "p90 |error|"});
    for (const auto& [source, s] : v.by_source)
        summary.add_row({source, std::to_string(s.count), fixed(100.0 * s.median_abs_error, 1) + "%", fixed(100.0 * s.p90_abs_error, 1) + "%"});
    const auto add = [&summary](const std::string& name, const ErrorSummary& s) {
        if (s.count > 0)
            summary.add_row({name, std::to_string(s.count), fixed(100.0 * s.median_abs_error, 1) + "%", fixed(100.0 * s.p90_abs_error, 1) + "%"});
    };
    add("serving records", v.serve);
    add("serving: time to first token", v.serve_ttft);
    add("serving: inter-token latency", v.serve_itl);
    if (v.overall.count > 0 || v.serve.count == 0)
        summary.add_row({"all training", std::to_string(v.overall.count), fixed(100.0 * v.overall.median_abs_error, 1) + "%",
                     fixed(100.0 * v.overall.p90_abs_error, 1) + "%"});
    return text + summary.render() + std::to_string(v.skipped) + " skipped\n";
}

nlohmann::json cross_validation_json(const CrossValidation& cv);

std::string validation_json(const ValidationResult& v, const CrossValidation* cv) {
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
            if (!r.engine.empty())
                record["under_load"] = {{"engine", r.engine}, {"static_output_tokens_per_s", r.static_output_tokens_per_s},
                                        {"ttft_p50_s", r.predicted_ttft_s}, {"tpot_p50_s", r.predicted_tpot_s}};
            for (const auto& [key, latency] : {std::pair{"ttft", &r.ttft}, std::pair{"itl", &r.itl}})
                if (*latency)
                    record[key] = {{"statistic", (*latency)->statistic}, {"measured_s", (*latency)->measured_s},
                                   {"predicted_s", (*latency)->predicted_s}, {"error", (*latency)->error()}};
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
    summary["serve"]["ttft"] = summary_json(v.serve_ttft);
    summary["serve"]["itl"] = summary_json(v.serve_itl);
    doc["summary"] = summary;
    if (cv) doc["cross_validation"] = cross_validation_json(*cv);
    return doc.dump(2);
}

}  // namespace ridgeline::report

namespace ridgeline::report {

namespace {
std::string pct(double fraction) { return fixed(100.0 * fraction, 1) + "%"; }
nlohmann::json residual_json(const Residual& r) {
    nlohmann::json doc = {{"id", r.id},
                          {"source", r.source},
                          {"error", r.error},
                          {"stack_family", r.kind.stack_family},
                          {"chip_family", r.kind.chip_family},
                          {"moe", r.kind.moe},
                          {"chips", r.kind.chips},
                          {"parameters", r.kind.params}};
    if (r.quantity != "throughput") doc["quantity"] = r.quantity;
    return doc;
}
nlohmann::json params_json(const StackFit& fit) {
    return {{"per_step_overhead_s", fit.params.per_step_overhead_s},
            {"layer_overhead_fraction", fit.params.layer_overhead_fraction},
            {"rank_time_cv", fit.params.rank_time_cv},
            {"sharded_comm_efficiency", fit.params.sharded_comm_efficiency},
            {"fitted", fit.fitted},
            {"borrowed", fit.borrowed},
            {"records", fit.records},
            {"models", fit.models},
            {"scaling_series", fit.series},
            {"in_sample", summary_json(fit.in_sample)}};
}
// Each stack's fit on all sources, its family's pooled fit and that of all stacks.
std::string fits_table(const CrossValidation& cv) {
    Table fits({"stack", "records", "layer overhead", "per-step s", "rank time cv", "sharded share", "fitted"});
    const auto fit_row = [&](const std::string& name, const StackFit& f) {
        std::string fitted;
        for (const std::string& p : f.fitted) fitted += (fitted.empty() ? "" : ", ") + p;
        fits.add_row({name, std::to_string(f.records), fixed(f.params.layer_overhead_fraction, 2), fixed(f.params.per_step_overhead_s, 2),
                      fixed(f.params.rank_time_cv, 4), fixed(f.params.sharded_comm_efficiency, 3), fitted.empty() ? "none" : fitted});
    };
    for (const auto& [name, fit] : cv.fits) fit_row(name, fit);
    for (const auto& [family, fit] : cv.family_fits) fit_row("family " + family + " (pooled)", fit);
    fit_row("all stacks (pooled)", cv.pooled);
    return fits.render();
}
}  // namespace

std::string cross_validation_table(const CrossValidation& cv) {
    Table slices({"slice", "held-out runs", "median |error|", "p90 |error|", "signed median"});
    slices.add_row({"all (leave one source out)", std::to_string(cv.overall.count), pct(cv.overall.median_abs_error),
                    pct(cv.overall.p90_abs_error), percent(cv.signed_median)});
    slices.add_row({"all, in sample (for comparison)", std::to_string(cv.in_sample_overall.count),
                    pct(cv.in_sample_overall.median_abs_error), pct(cv.in_sample_overall.p90_abs_error),
                    percent(cv.in_sample_signed_median)});
    for (const SliceSummary& s : cv.slices)
        slices.add_row({s.slice + ": " + s.key, std::to_string(s.abs.count), pct(s.abs.median_abs_error), pct(s.abs.p90_abs_error),
                        percent(s.signed_median)});
    std::string text = std::string(cv.serving ? "Serving output tokens/s held out: nothing is fitted on serving runs, so every prediction is "
                                                "out of sample as it stands (slices by the engine that ran the requests)\n"
                                              : "Cross-validated: each source predicted by stack fits that never saw it (a stack with no records "
                                                "left takes its family's pooled fit, or that of all stacks)\n") +
                       slices.render();
    if (!cv.serving) text += "\nFitted on all sources:\n" + fits_table(cv);
    const auto coverage = [&](const CrossValidation::Coverage& c, const std::string& from) {
        if (c.with_interval == 0) return;
        text += "90% intervals drawn from " + from + " cover " + std::to_string(c.covered) + " of " + std::to_string(c.with_interval) +
                " held-out runs (" + pct(static_cast<double>(c.covered) / c.with_interval) + ")\n";
    };
    coverage(cv.run_coverage, "the other runs' residuals");
    coverage(cv.source_coverage, "other sources' residuals only (a source never seen)");
    for (const auto& [quantity, c] : cv.latency_coverage) coverage(c, "the other runs' " + quantity + " errors (of that latency)");
    for (const std::string& held : cv.held_fixed) text += "held fixed in every fold: " + held + "\n";
    return text;
}

nlohmann::json cross_validation_json(const CrossValidation& cv) {
    nlohmann::json doc;
    doc["method"] = cv.serving ? "none fitted: serving predictions held out as they stand" : "leave one source out";
    doc["overall"] = summary_json(cv.overall);
    doc["overall"]["signed_median_error"] = cv.signed_median;
    doc["in_sample"] = summary_json(cv.in_sample_overall);
    doc["in_sample"]["signed_median_error"] = cv.in_sample_signed_median;
    doc["slices"] = nlohmann::json::array();
    for (const SliceSummary& s : cv.slices) {
        nlohmann::json slice = summary_json(s.abs);
        slice["slice"] = s.slice;
        slice["key"] = s.key;
        slice["signed_median_error"] = s.signed_median;
        doc["slices"].push_back(slice);
    }
    doc["records"] = nlohmann::json::array();
    for (std::size_t i = 0; i < cv.held_out.size(); ++i) {
        nlohmann::json record = residual_json(cv.held_out[i]);
        record["in_sample_error"] = cv.in_sample[i];
        doc["records"].push_back(record);
    }
    doc["fits"] = nlohmann::json::object();
    for (const auto& [name, fit] : cv.fits) doc["fits"][name] = params_json(fit);
    doc["family_fits"] = nlohmann::json::object();
    for (const auto& [family, fit] : cv.family_fits) doc["family_fits"][family] = params_json(fit);
    doc["pooled"] = params_json(cv.pooled);
    doc["interval_coverage"] = {{"level", 0.9},
                                {"other_runs", {{"covered", cv.run_coverage.covered}, {"with_interval", cv.run_coverage.with_interval}}},
                                {"other_sources", {{"covered", cv.source_coverage.covered}, {"with_interval", cv.source_coverage.with_interval}}}};
    for (const auto& [quantity, c] : cv.latency_coverage)
        doc["interval_coverage"]["latency_other_runs"][quantity] = {{"covered", c.covered}, {"with_interval", c.with_interval}};
    doc["held_fixed"] = cv.held_fixed;
    return doc;
}

std::string residuals_file_json(const CrossValidation& cv, const std::string& origin) {
    nlohmann::json doc;
    doc["schema"] = "ridgeline.residuals/1";
    doc["origin"] = origin;
    doc["residuals"] = nlohmann::json::array();
    for (const Residual& r : cv.held_out) doc["residuals"].push_back(residual_json(r));
    for (const Residual& r : cv.latency_held_out) doc["residuals"].push_back(residual_json(r));
    return doc.dump(1) + "\n";
}

}  // namespace ridgeline::report
