#include "validation/stack_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "engine/stragglers.hpp"

namespace ridgeline {

namespace {

// The grids scripts/fit_stacks.py searched, kept: bounded, physically plausible values.
std::vector<double> layer_share_grid() {
    std::vector<double> grid;
    for (int i = 0; i <= 40; ++i) grid.push_back(0.02 * i);
    return grid;
}
const std::vector<double> kStepOverheadGrid = {0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0};
const std::vector<double> kRankCvGrid = {0.0, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06};
std::vector<double> sharded_share_grid() {
    std::vector<double> grid;
    for (int i = 0; i < 20; ++i) grid.push_back(0.05 + 0.005 * i);
    for (const double v : {0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}) grid.push_back(v);
    return grid;
}
constexpr int kSeriesMinChipCounts = 3;
// A per-step cost and a share of each layer's compute are told apart only across steps of
// different lengths from different models: the largest per-step cost tried must move the
// shortest step's error further than the longest's by twice a good fit's median error, else
// it only soaks up noise and is carried to shorter steps it never saw.
constexpr int kMinModelsForStepOverhead = 3;
constexpr double kMinStepOverheadContrast = 0.1;
constexpr int kRounds = 3;

double score(const std::vector<FitCase*>& cases, const StackParams& p) {
    // Cases are independent (each keeps its own priced steps): split them over the cores.
    std::vector<double> errors(cases.size());
    // A trial the engine refuses for one case scores as hopeless rather than ending the fit.
    const auto error_of = [&](std::size_t i) {
        try {
            errors[i] = case_error(*cases[i], p);
        } catch (const std::exception&) {
            errors[i] = 1e9;
        }
    };
    const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers && cases.size() >= 16; ++w)
        threads.emplace_back([&, w] {
            for (std::size_t i = w; i < cases.size(); i += workers) error_of(i);
        });
    const std::size_t stride = threads.empty() ? 1 : workers;
    for (std::size_t i = 0; i < cases.size(); i += stride) error_of(i);
    for (std::thread& t : threads) t.join();
    const ErrorSummary s = summarize_errors(errors);
    return s.median_abs_error + 0.5 * s.p90_abs_error;
}

bool links_measured(const ChipSpec& chip) {
    return (chip.nvlink && chip.nvlink->collective_fraction < 1.0) || chip.scale_out.collective_fraction < 1.0;
}

}  // namespace

bool shards_parameters(const FitCase& c) { return c.scenario.plan.size(PlanAxis::fsdp) > 1 || c.scenario.plan.zero_stage() >= 3; }

double case_error(FitCase& c, const StackParams& p) {
    // The per-step cost and the straggler wait compose with the rest of the step in closed form
    // (engine/stragglers.hpp): only the layer share and the sharded share need the engine again.
    const std::pair<double, double> key{p.layer_overhead_fraction, shards_parameters(c) ? p.sharded_comm_efficiency : 1.0};
    auto base = c.base_step_s.find(key);
    if (base == c.base_step_s.end()) {
        TrainingScenario trial = c.scenario;
        trial.stack.fitted = {0.0, key.first, 0.0, key.second};
        base = c.base_step_s.emplace(key, simulate_training(trial).step_time_s).first;
    }
    c.scenario.stack.fitted = p;
    const StackStepOverheads overheads = stack_step_overheads(c.scenario);
    const double step_s = step_with_overheads(base->second, overheads.step_overhead_s, overheads.straggler_fraction);
    return c.tokens_per_step / step_s / c.measured_tokens_per_s - 1.0;
}

StackFit fit_stack(const std::vector<FitCase*>& cases, const StackParams& start, const std::set<std::string>& disabled) {
    StackFit fit;
    fit.params = start;
    fit.records = static_cast<int>(cases.size());
    std::set<std::string> models;
    std::map<std::string, std::set<std::int64_t>> counts;
    int sharded_measured = 0;
    double shortest_step_s = std::numeric_limits<double>::infinity(), longest_step_s = 0;
    for (const FitCase* c : cases) {
        models.insert(c->model);
        const double step_s = c->tokens_per_step / c->measured_tokens_per_s;
        shortest_step_s = std::min(shortest_step_s, step_s);
        longest_step_s = std::max(longest_step_s, step_s);
        counts[c->source].insert(c->chips);
        sharded_measured += c->shards_on_measured_links;
        fit.sharded_records += shards_parameters(*c);
    }
    fit.models = static_cast<int>(models.size());
    std::vector<FitCase*> series;
    for (const auto& [source, chip_counts] : counts)
        if (static_cast<int>(chip_counts.size()) >= kSeriesMinChipCounts) fit.series.push_back(source);
    for (FitCase* c : cases)
        if (std::find(fit.series.begin(), fit.series.end(), c->source) != fit.series.end()) series.push_back(c);
    if (fit.records < kMinFitRecords) return fit;

    struct Knob {
        const char* name;
        double StackParams::* member;
        std::vector<double> grid;
    };
    std::vector<Knob> knobs;
    const auto add = [&](const char* name, double StackParams::* member, std::vector<double> grid, bool applies) {
        if (!applies || disabled.count(name)) return;
        knobs.push_back({name, member, std::move(grid)});
        fit.fitted.push_back(name);
    };
    add("layer_overhead_fraction", &StackParams::layer_overhead_fraction, layer_share_grid(), true);
    const double step_contrast = kStepOverheadGrid.back() * (1.0 / shortest_step_s - 1.0 / longest_step_s);
    add("per_step_overhead_s", &StackParams::per_step_overhead_s, kStepOverheadGrid,
        fit.models >= kMinModelsForStepOverhead && step_contrast >= kMinStepOverheadContrast);
    // A share every sharded plan of the stack pays: from as many records as any fit needs, not one run.
    add("sharded_comm_efficiency", &StackParams::sharded_comm_efficiency, sharded_share_grid(), sharded_measured >= kMinFitRecords);
    if (disabled.count("rank_time_cv")) series.clear();
    if (!series.empty()) fit.fitted.push_back("rank_time_cv");

    double best = score(cases, fit.params);
    for (int round = 0; round < kRounds; ++round) {
        bool improved = false;
        for (const Knob& knob : knobs) {
            std::vector<double> scores;
            for (const double value : knob.grid) {
                StackParams trial = fit.params;
                trial.*knob.member = value;
                scores.push_back(score(cases, trial));
            }
            // Of values that score alike, the one nearest the start: no more overhead than the records show.
            auto pick = static_cast<std::size_t>(std::min_element(scores.begin(), scores.end()) - scores.begin());
            const double lowest = scores[pick], start_value = start.*knob.member;
            for (std::size_t i = 0; i < scores.size(); ++i)
                if (scores[i] <= lowest + 1e-9 && std::abs(knob.grid[i] - start_value) < std::abs(knob.grid[pick] - start_value)) pick = i;
            if (scores[pick] < best - 1e-9) {
                best = scores[pick];
                fit.params.*knob.member = knob.grid[pick];
                improved = true;
            }
        }
        // How much one rank's step time varies is what a scaling series shows.
        if (!series.empty()) {
            double series_best = 0, value_best = fit.params.rank_time_cv;
            bool first = true;
            for (const double value : kRankCvGrid) {
                StackParams trial = fit.params;
                trial.rank_time_cv = value;
                const double s = score(series, trial);
                if (first || s < series_best - 1e-9) series_best = s, value_best = value, first = false;
            }
            if (value_best != fit.params.rank_time_cv) {
                fit.params.rank_time_cv = value_best;
                best = score(cases, fit.params);
                improved = true;
            }
        }
        if (!improved) break;
    }
    std::vector<double> errors;
    for (FitCase* c : cases) errors.push_back(case_error(*c, fit.params));
    fit.in_sample = summarize_errors(errors);
    return fit;
}

FitCases build_fit_cases(const std::vector<RunRecord>& records, const std::filesystem::path& data_dir) {
    FitCases out;
    for (const RunRecord& r : records) {
        if (r.kind != "train") continue;
        RecordResult result = predict_record(r, data_dir);
        if (!result.ok) {
            out.skipped.push_back(result);
            continue;
        }
        FitCase c;
        c.id = r.id;
        c.source = r.source_key;
        c.model = r.model_name;
        c.chips = r.count;
        c.measured_tokens_per_s = *r.tokens_per_s;
        c.scenario = record_scenario(r, data_dir);
        c.tokens_per_step = simulate_training(c.scenario).tokens_per_step;
        c.stack = c.scenario.stack.name;
        // A framework no stack describes runs on the chip's default stack, but its records say
        // nothing of that stack's overheads: they fit (and are priced) as a stack of their own.
        if (!record_stack_file(r, data_dir)) {
            c.stack = "unlisted " + (r.framework.empty() ? std::string("framework") : r.framework);
            c.scenario.stack.family = c.stack;
        }
        c.shards_on_measured_links = r.fsdp > 1 && links_measured(c.scenario.chip);
        out.cases.push_back(std::move(c));
    }
    return out;
}

}  // namespace ridgeline
