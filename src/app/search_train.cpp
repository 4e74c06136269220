#include "app/search_train.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "accuracy/residuals_file.hpp"
#include "accuracy/training_interval.hpp"
#include "core/error.hpp"
#include "engine/cost.hpp"
#include "hardware/catalog.hpp"

namespace ridgeline::app {

namespace {

double elapsed_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

report::PlanWithReport simulate(const SearchedPlan& plan, const SearchTrainRequest& request, const TrainSearchSpec& spec) {
    TrainingSetup setup;
    setup.model = spec.model;
    setup.hardware = request.hardware;
    setup.cluster = spec.cluster;
    setup.chips = spec.cluster.chips();
    setup.seq_len = spec.seq_len;
    setup.global_batch_seqs = spec.global_batch_seqs;
    setup.plan = plan;
    setup.stack = spec.stack;
    report::PlanWithReport out{plan, build_training_scenario(setup, request.data_dir, "plan"), {}};
    out.report = simulate_training(out.scenario);
    return out;
}

// Where no other count is at least as fast and at least as cheap (and better in one).
void mark_front(std::vector<report::ScalingPoint>& points) {
    for (auto& p : points) {
        if (!p.best) continue;
        p.on_front = true;
        for (const auto& q : points) {
            if (!q.best || &q == &p) continue;
            const double q_cost = q.cost_usd.value_or(0), p_cost = p.cost_usd.value_or(0);
            if (q.time_to_train_s <= p.time_to_train_s && q_cost <= p_cost &&
                (q.time_to_train_s < p.time_to_train_s || q_cost < p_cost))
                p.on_front = false;
        }
    }
}

double score(const report::ScalingPoint& p, ScalingObjective objective) {
    switch (objective) {
        case ScalingObjective::cost: return p.cost_usd.value_or(p.time_to_train_s * static_cast<double>(p.chips));
        case ScalingObjective::mfu: return -p.best->report.mfu;
        case ScalingObjective::time: return p.time_to_train_s;
        case ScalingObjective::goodput: return p.wall_s;
    }
    return p.time_to_train_s;
}

}  // namespace

const char* objective_name(ScalingObjective objective) {
    static constexpr const char* kNames[] = {"time", "cost", "mfu", "goodput"};  // in ScalingObjective's order
    return kNames[static_cast<std::size_t>(objective)];
}

report::TrainSearchOutcome search_train(const SearchTrainRequest& request, std::int64_t chips) {
    require_kernel_data(request.spec.chip);
    const auto start = std::chrono::steady_clock::now();
    TrainSearchSpec spec = request.spec;
    if (request.topology) {
        if (request.topology->chips() != chips)
            throw InputError(kRequest, "chips", "the topology file has " + std::to_string(request.topology->chips()) + " chips");
        spec.cluster = *request.topology;
    } else {
        ClusterShape shape;
        shape.chips = chips;
        shape.domains = request.domains;
        spec.cluster = build_cluster(request.hardware, shape);
    }
    spec.global_batch_seqs = request.global_batch_seqs.value_or(static_cast<double>(chips));  // neither: one sequence per chip
    if (request.global_batch_tokens) {
        const auto sequences = batch_sequences(*request.global_batch_tokens, spec.seq_len);
        if (!sequences)
            throw InputError(kRequest, "global_batch_tokens", "not a whole number of sequences of length " + std::to_string(static_cast<std::int64_t>(spec.seq_len)));
        spec.global_batch_seqs = *sequences;
    }
    const unsigned threads = search_threads(spec.threads);
    report::TrainSearchOutcome outcome{spec, search_training(spec), {}, 0, threads, request.train_tokens};
    for (const SearchedPlan& plan : outcome.result.top) outcome.top.push_back(simulate(plan, request, outcome.spec));
    const std::vector<Residual> residuals = load_residuals(residuals_path(request.data_dir));
    for (auto& top : outcome.top) top.report.interval = training_interval(residuals, top.scenario);
    outcome.elapsed_s = elapsed_since(start);
    return outcome;
}

// One count's best plan, its time and cost to train, with and without failures.
static report::ScalingPoint scaling_point(const SearchTrainRequest& request, std::int64_t chips) {
    SearchTrainRequest best_only = request;
    best_only.spec.top_k = 1;
    report::TrainSearchOutcome outcome = search_train(best_only, chips);
    report::ScalingPoint point;
    point.chips = chips;
    point.result = outcome.result;
    if (outcome.top.empty()) return point;
    point.best = outcome.top.front();
    point.time_to_train_s = point.best->report.time_to_train_s(request.train_tokens);
    point.cost_usd = cost_usd(request.spec.chip, static_cast<double>(chips), point.time_to_train_s);
    const RunOutlook outlook = run_outlook(point.best->scenario, point.best->report, request.hardware, request.train_tokens, request.operations);
    point.wall_s = outlook.wall_s();
    if (outlook.goodput) {
        point.goodput = outlook.goodput->goodput;
        // Failures faster than it recovers: the run never ends, so no objective picks it.
        if (!outlook.goodput->finishes) point.wall_s = std::numeric_limits<double>::infinity();
    }
    return point;
}

report::ScalingOutcome search_train_scaling(const SearchTrainRequest& request) {
    const auto start = std::chrono::steady_clock::now();
    report::ScalingOutcome scaling{request.spec.model.name, request.spec.chip.name, objective_name(request.objective),
                                   request.train_tokens, 0, {}, 0, std::nullopt, false};
    for (const std::int64_t chips : request.chip_counts) scaling.points.push_back(scaling_point(request, chips));
    mark_front(scaling.points);
    const report::ScalingPoint* chosen = nullptr;
    for (const auto& p : scaling.points)
        if (p.best && (chosen == nullptr || score(p, request.objective) < score(*chosen, request.objective))) chosen = &p;
    if (chosen != nullptr) scaling.chosen_chips = chosen->chips;
    scaling.elapsed_s = elapsed_since(start);
    return scaling;
}

std::vector<std::int64_t> deadline_candidates(const SearchTrainRequest& request) {
    if (request.topology) return {request.topology->chips()};
    if (request.chip_counts.size() > 1) return request.chip_counts;
    if (!request.hardware.system)
        throw InputError(kRequest, "chips", "a bare chip has no system to grow: name a system, or give --chips as a range");
    const SystemSpec& system = *request.hardware.system;
    const ScaleUpSpec& up = system.scale_up;
    const std::int64_t domain = up.max_domain_chips();
    const std::int64_t largest = system.max_scale_out_domains ? *system.max_scale_out_domains * domain : std::int64_t{1} << 20;
    const std::int64_t step = up.kind == ScaleUpSpec::Kind::switched ? domain : std::max<std::int64_t>(system.chips_per_host, 1);
    std::vector<std::int64_t> counts;
    for (std::int64_t chips = step; chips <= largest; chips += step) {
        if (up.kind == ScaleUpSpec::Kind::torus && chips < domain && auto_torus_shape(chips, up).empty()) continue;
        if (up.kind == ScaleUpSpec::Kind::torus && chips > domain && chips % domain != 0) continue;  // whole slices over DCN
        counts.push_back(chips);
    }
    return counts;
}

report::ScalingOutcome search_train_deadline(const SearchTrainRequest& request, double deadline_s,
                                             const std::function<void(const report::ScalingPoint&)>& progress) {
    if (request.train_tokens <= 0) throw InputError(kRequest, "train_tokens", "a deadline needs the tokens to train");
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::int64_t> candidates = deadline_candidates(request);
    if (candidates.empty()) throw InputError(kRequest, "chips", "no chip count to try");
    report::ScalingOutcome scaling{request.spec.model.name, request.spec.chip.name, "deadline", request.train_tokens, 0, {}, 0, deadline_s, false};
    const auto probe = [&](std::size_t index) {
        for (const auto& p : scaling.points)
            if (p.chips == candidates[index]) return p.best && p.wall_s <= deadline_s;
        scaling.points.push_back(scaling_point(request, candidates[index]));
        progress(scaling.points.back());
        return scaling.points.back().best && scaling.points.back().wall_s <= deadline_s;
    };
    // The first candidate at or above `chips` (the last one when none is).
    const auto at_least = [&](double chips) {
        std::size_t i = 0;
        while (i + 1 < candidates.size() && static_cast<double>(candidates[i]) < chips) ++i;
        return i;
    };
    // Doubling until a count meets the deadline, or until even linear scaling from the last count
    // to the largest, with a 2x margin for superlinear effects (less recompute with more memory),
    // could not meet it.
    const auto hopeless = [&] {
        const report::ScalingPoint& p = scaling.points.back();
        return p.best && p.wall_s * static_cast<double>(p.chips) / static_cast<double>(candidates.back()) > 2.0 * deadline_s;
    };
    std::size_t low = 0, high = 0;
    bool met = probe(0);
    while (!met && high + 1 < candidates.size() && !hopeless()) {
        low = high;
        high = std::max(high + 1, at_least(2.0 * static_cast<double>(candidates[high])));
        met = probe(high);
    }
    // Between the last count that missed and the first that met, 1.25, 1.5 and 1.75 times the
    // former, fewest first. Not a bisection: how well a count divides the batch and the model
    // matters as much as its size, so time to train is far from monotone in the chips.
    if (met && high > low + 1)
        for (const double factor : {1.25, 1.5, 1.75}) {
            const std::size_t i = at_least(factor * static_cast<double>(candidates[low]));
            if (i <= low || i >= high) continue;
            if (probe(i)) break;
        }
    std::sort(scaling.points.begin(), scaling.points.end(), [](const auto& a, const auto& b) { return a.chips < b.chips; });
    mark_front(scaling.points);
    scaling.deadline_met = met;
    const report::ScalingPoint* chosen = nullptr;
    for (const auto& p : scaling.points) {
        if (!p.best) continue;
        if (met ? (p.wall_s <= deadline_s && (chosen == nullptr || p.chips < chosen->chips))
                : (chosen == nullptr || p.wall_s < chosen->wall_s))
            chosen = &p;
    }
    if (chosen != nullptr) scaling.chosen_chips = chosen->chips;
    scaling.elapsed_s = elapsed_since(start);
    return scaling;
}

}  // namespace ridgeline::app
