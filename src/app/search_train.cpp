#include "app/search_train.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "core/error.hpp"
#include "engine/cost.hpp"

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
    if (request.global_batch_seqs) spec.global_batch_seqs = *request.global_batch_seqs;
    else if (request.global_batch_tokens) spec.global_batch_seqs = *request.global_batch_tokens / spec.seq_len;
    else spec.global_batch_seqs = static_cast<double>(chips);  // one sequence per chip
    if (spec.global_batch_seqs != static_cast<double>(static_cast<std::int64_t>(spec.global_batch_seqs)) || spec.global_batch_seqs < 1)
        throw InputError(kRequest, "global_batch_tokens",
                         "not a whole number of sequences of length " + std::to_string(static_cast<std::int64_t>(spec.seq_len)));
    const unsigned threads = spec.threads != 0 ? spec.threads : std::max(1U, std::thread::hardware_concurrency());
    report::TrainSearchOutcome outcome{spec, search_training(spec), {}, 0, threads, request.train_tokens};
    for (const SearchedPlan& plan : outcome.result.top) outcome.top.push_back(simulate(plan, request, outcome.spec));
    outcome.elapsed_s = elapsed_since(start);
    return outcome;
}

report::ScalingOutcome search_train_scaling(const SearchTrainRequest& request) {
    const auto start = std::chrono::steady_clock::now();
    report::ScalingOutcome scaling{request.spec.model.name, request.spec.chip.name, objective_name(request.objective),
                                   request.train_tokens, 0, {}, 0};
    SearchTrainRequest best_only = request;
    best_only.spec.top_k = 1;
    for (const std::int64_t chips : request.chip_counts) {
        report::TrainSearchOutcome outcome = search_train(best_only, chips);
        report::ScalingPoint point;
        point.chips = chips;
        point.result = outcome.result;
        if (!outcome.top.empty()) {
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
        }
        scaling.points.push_back(std::move(point));
    }
    mark_front(scaling.points);
    const report::ScalingPoint* chosen = nullptr;
    for (const auto& p : scaling.points)
        if (p.best && (chosen == nullptr || score(p, request.objective) < score(*chosen, request.objective))) chosen = &p;
    if (chosen != nullptr) scaling.chosen_chips = chosen->chips;
    scaling.elapsed_s = elapsed_since(start);
    return scaling;
}

}  // namespace ridgeline::app
