#include <iostream>
#include <set>

#include "cli/commands.hpp"
#include "cli/html_flag.hpp"
#include "core/error.hpp"
#include "cli/progress.hpp"
#include "report/reports.hpp"
#include "report/search_reports.hpp"
#include "validation/compare_published.hpp"
#include "accuracy/residuals_file.hpp"
#include "app/validate.hpp"
#include "io/safe_write.hpp"

namespace ridgeline::cli {

void add_validate_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        std::string file, source, residuals_out;
        std::vector<std::string> hold, hold_pooled, hold_in_family;
        bool json = false, compare_published = false, progress = false, cross_validate = false;
        unsigned threads = 0;
        HtmlTarget html;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* c = app.add_subcommand("validate", "predict published runs (run-record files) and compare with what they measured");
    c->add_option("file", f->file, "a ridgeline.run-record/1 file")->required();
    c->add_flag("--json", f->json, "print one JSON document (schema ridgeline.validation/1)");
    c->add_flag("--compare-published", f->compare_published,
                "search each training record's job and rank its published plan among the plans found (schema ridgeline.compare-published/1)");
    c->add_flag("--cross-validate", f->cross_validate,
                "refit every stack parameter with each source left out and predict that source (leave one source out); "
                "the table and the JSON's cross_validation section give the held-out errors by source, stack, chip, dense/MoE and scale");
    c->add_option("--write-residuals", f->residuals_out,
                  "with --cross-validate: write the held-out residuals that train, serve and the searches draw their intervals from "
                  "(ridgeline.residuals/1; the shipped ones are accuracy/held-out-residuals.json and, from the serving records, "
                  "accuracy/serving-residuals.json)");
    c->add_option("--hold", f->hold,
                  "with --cross-validate: never fit this stack parameter (per_step_overhead_s, layer_overhead_fraction, rank_time_cv, "
                  "sharded_comm_efficiency; repeatable; none: fit them all), in place of accuracy/fit-policy.json's list, to measure "
                  "what fitting each earns out of sample")
        ->check(CLI::IsMember({"none", "per_step_overhead_s", "layer_overhead_fraction", "rank_time_cv", "sharded_comm_efficiency"}));
    c->add_option("--hold-pooled", f->hold_pooled,
                  "with --cross-validate: fit this stack parameter on a stack's or its family's records only, never in the fit pooled "
                  "across families (repeatable; none: pool them all), in place of accuracy/fit-policy.json's list")
        ->check(CLI::IsMember({"none", "per_step_overhead_s", "layer_overhead_fraction", "rank_time_cv", "sharded_comm_efficiency"}));
    c->add_option("--hold-in-family", f->hold_in_family,
                  "with --cross-validate: never fit this stack parameter in one family's fits (FAMILY:PARAMETER, e.g. "
                  "pytorch:sharded_comm_efficiency; repeatable; none: hold none), in place of accuracy/fit-policy.json's list");
    c->add_option("--source", f->source, "only records whose source key contains this text");
    c->add_option("--threads", f->threads, "search threads (default: all cores)")->check(CLI::Range(1U, 1024U));
    add_progress_flag(*c, f->progress);
    add_html_flag(*c, f->html, "predicted against measured, by source");
    c->callback([f, &options] {
        f->html.check();
        if (f->compare_published && f->html.wanted()) throw InputError("--html", "", "no page is drawn for --compare-published");
        if (f->compare_published) {
            const auto comparisons = compare_published(load_run_records(f->file, options.data_dir), options.data_dir, f->source, f->threads);
            std::cout << (f->json ? report::comparison_json(comparisons) + "\n" : report::comparison_table(comparisons));
            return;
        }
        if (!f->residuals_out.empty() && !f->cross_validate) throw InputError("--write-residuals", "", "needs --cross-validate");
        if (!f->hold.empty() && !f->cross_validate) throw InputError("--hold", "", "needs --cross-validate");
        if (!f->hold_pooled.empty() && !f->cross_validate) throw InputError("--hold-pooled", "", "needs --cross-validate");
        if (!f->hold_in_family.empty() && !f->cross_validate) throw InputError("--hold-in-family", "", "needs --cross-validate");
        app::ValidateRequest request;
        request.file = f->file;
        request.source = f->source;
        request.cross_validate = f->cross_validate;
        request.data_dir = options.data_dir;
        if (!f->hold.empty()) request.hold = f->hold;
        if (!f->hold_pooled.empty()) request.hold_pooled = f->hold_pooled;
        if (!f->hold_in_family.empty()) request.hold_in_family = f->hold_in_family;
        ProgressLine line(f->progress);
        const auto outcome = app::validate(request, [&line](std::size_t done, std::size_t total) {
            line.update(static_cast<double>(done), static_cast<double>(total), std::to_string(done) + " of " + std::to_string(total) + " records",
                        static_cast<double>(done), "records");
        });
        line.finish();
        const auto& cv = outcome.cross_validation;
        if (!f->residuals_out.empty()) {
            const auto count = [](const std::set<std::string>& names) { return std::to_string(names.size()); };
            const auto in_family = [](const HeldParameters& held) {
                std::size_t n = 0;
                for (const auto& entry : held.in_family) n += entry.second.size();
                return std::to_string(n);
            };
            const std::string how = cv->serving ? "serving records, nothing fitted on them"
                                                : count(outcome.held.everywhere) + " parameter(s) held in every fit, " +
                                                      count(outcome.held.when_pooled) + " in the fit pooled across families only, " +
                                                      in_family(outcome.held) + " in one family's fits";
            io::write_file_atomically(f->residuals_out, report::residuals_file_json(*cv, "ridgeline validate " + f->file + " --cross-validate: " + how));
        }
        const std::string json = f->json || f->html.wanted() ? report::validation_json(outcome.result, cv ? &*cv : nullptr) : "";
        f->html.write(json);
        std::cout << (f->json ? json + "\n" : report::validation_table(outcome.result) + (cv ? "\n" + report::cross_validation_table(*cv) : ""));
    });
}

}  // namespace ridgeline::cli
