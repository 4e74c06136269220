#include <nlohmann/json.hpp>

#include "engine/cost.hpp"
#include "report/json_documents.hpp"
#include "report/reports.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {

std::string days(double s) { return fixed(s / 86400.0, 2) + " days"; }

// Spans from seconds to weeks in the unit a reader thinks in.
std::string span(double s) {
    if (s >= 86400.0) return days(s);
    if (s >= 3600.0) return fixed(s / 3600.0, 2) + " h";
    if (s >= 60.0) return fixed(s / 60.0, 1) + " min";
    return seconds(s);
}

}  // namespace

std::string outlook_table(const TrainingScenario& s, const RunOutlook& o) {
    Table t({"time to train " + si(o.train_tokens) + " tokens, with failures and checkpoints", "value"});
    t.add_row({"steps alone", days(o.goodput_inputs.useful_s)});
    if (o.goodput) {
        const GoodputReport& g = *o.goodput;
        t.add_row({"mean time between failures (job)", span(g.mean_time_between_failures_s)});
        t.add_row({"checkpoint write", span(g.checkpoint_write_s)});
        t.add_row({std::string("checkpoint every") + (g.interval_given ? "" : " (Young/Daly optimum)"), span(g.checkpoint_interval_s)});
        if (!g.finishes) {
            t.add_row({"wall-clock time", "never finishes: failures come faster than restarts and lost work"});
        } else {
            t.add_row({"expected failures", fixed(g.expected_failures, 0)});
            t.add_row({"checkpointing", days(g.checkpointing_s)});
            t.add_row({"work lost to failures", days(g.lost_work_s)});
            t.add_row({"restarts", days(g.restarting_s)});
            t.add_row({"wall-clock time", days(g.wall_s)});
            t.add_row({"goodput (effective training time)", fixed(100.0 * g.goodput, 1) + "%"});
            if (const auto cost = cost_usd(s.chip, static_cast<double>(s.cluster.chips()), g.wall_s))
                t.add_row({"cost at list price, wall-clock", "$" + si(*cost)});
        }
    }
    if (o.energy) {
        const EnergyReport& e = *o.energy;
        t.add_row({"power per chip (" + fixed(100.0 * o.busy_fraction, 0) + "% of the step in kernels)", si(e.chip_w, "W")});
        t.add_row({"facility power (chips, hosts, PUE)", si(e.facility_w, "W")});
        t.add_row({"energy per step", si(e.per_step_j / 3.6e6, "kWh")});
        t.add_row({"energy per million tokens", si(e.per_million_tokens_j / 3.6e6, "kWh")});
        t.add_row({"energy of the run", fixed(e.over_s_j(o.wall_s()) / 3.6e9, 1) + " MWh"});
    }
    std::string text = t.render();
    for (const std::string& a : o.assumptions) text += "assumed: " + a + "\n";
    for (const std::string& m : o.missing) text += "missing: " + m + "\n";
    return text;
}

std::string training_outlook_json(const TrainingScenario& s, const TrainingReport& r, const RunOutlook& o) {
    nlohmann::json doc = training_document(s, r, o.train_tokens);
    nlohmann::json& out = doc["outlook"];
    out["useful_s"] = o.goodput_inputs.useful_s;
    out["checkpoint_bytes"] = o.goodput_inputs.checkpoint_bytes;
    if (o.goodput) {
        const GoodputReport& g = *o.goodput;
        out["goodput"] = {{"mean_time_between_failures_s", g.mean_time_between_failures_s},
                          {"checkpoint_write_s", g.checkpoint_write_s},
                          {"checkpoint_interval_s", g.checkpoint_interval_s},
                          {"checkpoint_interval_given", g.interval_given},
                          {"finishes", g.finishes},
                          {"goodput", g.goodput}};
        if (g.finishes) {
            out["goodput"]["expected_failures"] = g.expected_failures;
            out["goodput"]["checkpointing_s"] = g.checkpointing_s;
            out["goodput"]["lost_work_s"] = g.lost_work_s;
            out["goodput"]["restarting_s"] = g.restarting_s;
            out["goodput"]["wall_s"] = g.wall_s;
            if (const auto cost = cost_usd(s.chip, static_cast<double>(s.cluster.chips()), g.wall_s)) out["goodput"]["cost_usd"] = *cost;
        }
    }
    if (o.energy) {
        const EnergyReport& e = *o.energy;
        out["energy"] = {{"busy_fraction", o.busy_fraction},
                         {"chip_w", e.chip_w},
                         {"it_w", e.it_w},
                         {"facility_w", e.facility_w},
                         {"per_step_j", e.per_step_j},
                         {"per_million_tokens_j", e.per_million_tokens_j},
                         {"run_j", e.over_s_j(o.wall_s())}};
    }
    out["assumptions"] = o.assumptions;
    out["missing"] = o.missing;
    return doc.dump(2);
}

}  // namespace ridgeline::report
