#include "scenario/training_setup.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "mesh/plan_axes.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/stack_file.hpp"

namespace ridgeline {

namespace {

std::string text(std::int64_t value) { return std::to_string(value); }

}  // namespace

std::string default_strategy_name(const Plan& p) {
    if (p.fsdp > 1 && p.tp == 1 && p.pp == 1 && p.cp == 1 && p.ep == 1) return "fsdp";
    if (p.fsdp > 1 && p.pp == 1 && p.cp == 1 && p.ep == 1) return "fsdp-tp";
    const std::string base = p.sequence_parallel ? "megatron-3d-sp" : "megatron-3d";
    return p.ep > 1 && p.etp == 1 && p.tp > 1 ? base + "-etp1" : base;
}

std::vector<std::int64_t> balanced_stage_layers(std::int64_t layers, std::int64_t stages) {
    // The stages left a layer short are the outermost (first, last, second, second-to-last ...),
    // which also hold the embedding and the loss, as Megatron-Core's uneven splits make them.
    std::vector<std::int64_t> split(static_cast<std::size_t>(stages), layers / stages + 1);
    const std::int64_t lighter = layers % stages == 0 ? stages : stages - layers % stages;
    for (std::int64_t i = 0; i < lighter; ++i) {
        const std::int64_t stage = i % 2 == 0 ? i / 2 : stages - 1 - i / 2;
        --split[static_cast<std::size_t>(stage)];
    }
    return split;
}

void apply_zero_stage(Strategy& strategy, int zero_stage) {
    if (zero_stage < 1) strategy.optimizer_shard_axes.clear();
    if (zero_stage < 2) strategy.gradient_shard_axes.clear();
}

void fold_expert_axes(Strategy& strategy, const TrainingPlan& plan) {
    // A split axis: wherever the strategy names it, its inner part splits the same dimension.
    for (const auto& entry : plan.axes) {
        const std::string& name = entry.first;  // not a structured binding: clang's lambdas cannot capture those
        const std::string part = expert_part_name(name);
        if (!plan.axes.contains(part)) continue;
        const auto widen = [&](AxisList& axes) {
            const auto it = std::find(axes.begin(), axes.end(), name);
            if (it != axes.end()) axes.insert(it, part);
        };
        for (TensorSpec* spec : {&strategy.residual, &strategy.attention, &strategy.mlp_hidden, &strategy.w_qkv, &strategy.w_out,
                                 &strategy.w_mlp_in, &strategy.w_mlp_out})
            for (AxisList& axes : spec->axes) widen(axes);
        widen(strategy.gradient_shard_axes);
        widen(strategy.optimizer_shard_axes);
    }
    for (TensorSpec* experts : {&strategy.w_mlp_in, &strategy.w_mlp_out})
        for (const std::string& axis : plan.expert_folded_axes) {
            for (AxisList& axes : experts->axes) std::erase(axes, axis);  // an axis splits experts or another dimension, not both
            experts->on(LogicalDim::expert).push_back(axis);
        }
}

Mesh place_plan(const Cluster& cluster, const TrainingPlan& plan, const std::vector<std::string>& placement) {
    std::vector<MeshAxis> axes;
    for (const auto& [name, size] : plan.axes) axes.push_back({name, size});
    if (placement.empty()) return place_mesh(cluster, axes, {});
    // The order names the axes that matter; those of size 1 go outermost, where they change nothing.
    std::vector<std::string> order;
    for (const std::string& name : placement) {
        if (plan.axes.contains(expert_part_name(name))) order.push_back(expert_part_name(name));  // just inside its axis
        order.push_back(name);
    }
    for (const auto& axis : axes)
        if (std::find(order.begin(), order.end(), axis.name) == order.end()) order.push_back(axis.name);
    return place_mesh(cluster, axes, order);
}

TrainingPlan make_training_plan(const Plan& p, std::int64_t chips, const PlanWorkload& workload, const ModelSpec& model,
                                const ChipSpec& chip, const std::string& origin) {
    Plan resolved = p;
    resolved.dp = data_parallel_degree(p, chips);
    if (const auto fault = plan_fault(model, resolved, chips, workload)) throw InputError(origin, fault->field, fault->message);
    const std::int64_t dp = resolved.dp;
    // Folded, the expert ranks take the tensor, then the context ranks, then the data ranks, as
    // Megatron-Core's expert rank generator does; an axis they take only part of is split.
    std::int64_t ep_from_data = p.ep;
    AxisList folded;
    std::optional<std::pair<PlanAxis, std::int64_t>> split;  // the axis and its part inside expert ranks
    const auto fold = [&](PlanAxis axis, std::int64_t size) {
        if (size == 1 || ep_from_data == 1) return;
        if (ep_from_data % size == 0) {
            ep_from_data /= size;
            folded.push_back(axis_name(axis));
        } else if (size % ep_from_data == 0) {
            split = {axis, ep_from_data};
            folded.push_back(expert_part_name(axis_name(axis)));
            ep_from_data = 1;
        } else {
            throw InputError(origin, "ep", "ep " + text(p.ep) + " would take part of the " + axis_name(axis) + " axis (" +
                                               text(size) + " ranks) that it does not divide");
        }
    };
    if (p.fold_experts && p.ep > 1) {
        if (p.etp == 1 && p.tp > 1) {
            if (!p.sequence_parallel)
                throw InputError(origin, "sequence_parallel", "experts spread over the tensor ranks need each rank's own tokens (sequence parallelism)");
            fold(PlanAxis::tensor, p.tp);
        }
        fold(PlanAxis::context, p.cp);
        // Under Megatron-FSDP every data rank is an fsdp rank: the rest of ep comes from those.
        if ((dp / p.fsdp) % ep_from_data != 0) fold(PlanAxis::fsdp, p.fsdp);
    }
    if ((dp / p.fsdp) % ep_from_data != 0)
        throw InputError(origin, "ep", "ep " + text(p.ep) + " does not divide the " + text(dp / p.fsdp) +
                                           " data-parallel replicas it is carved from" +
                                           (folded.empty() ? "" : " (after " + text(p.ep / ep_from_data) + " from tensor and context)"));

    TrainingPlan plan;
    static_cast<Plan&>(plan) = resolved;
    plan.axes = resolved.axis_sizes();
    plan.axes[axis_name(PlanAxis::expert)] = ep_from_data;
    plan.axes[axis_name(PlanAxis::data)] = dp / p.fsdp / ep_from_data;
    if (split) {
        const std::string name = axis_name(split->first);
        plan.axes[name] /= split->second;
        plan.axes[expert_part_name(name)] = split->second;
    }
    plan.expert_folded_axes = folded;
    if (p.vpp > 1) plan.schedule = PipelineSchedule::interleaved;
    if (!chip.supports(p.precision))
        throw InputError(origin, "precision", chip.name + " has no " + std::string(dtype_name(p.precision)) + " arithmetic");

    // Batch: global = micro-batch x dp x micro-batches per step (plan_fault checked that dp splits it).
    const double per_replica = workload.batch_seqs / static_cast<double>(dp);
    plan.micro_batch_seqs = p.micro_batch_seqs > 0 ? p.micro_batch_seqs : (p.pp > 1 ? 1.0 : per_replica);
    if (std::fmod(per_replica, plan.micro_batch_seqs) != 0.0)
        throw InputError(origin, "micro_batch", "micro-batches of " + text(static_cast<std::int64_t>(plan.micro_batch_seqs)) +
                                                    " sequences do not divide the " + text(static_cast<std::int64_t>(per_replica)) +
                                                    " sequences of each replica");
    plan.microbatches = per_replica / plan.micro_batch_seqs;
    check_training_plan(model, plan);  // before the mesh, so the error names the model's field
    return plan;
}

TrainingScenario build_training_scenario(const TrainingSetup& setup, const std::filesystem::path& data_dir,
                                         const std::string& origin) {
    const Plan& p = setup.plan;
    require_kernel_data(setup.hardware.chip);
    TrainingScenario scenario;
    scenario.model = setup.model;
    scenario.chip = setup.hardware.chip;
    scenario.seq_len = setup.seq_len;
    scenario.global_batch_seqs = setup.global_batch_seqs;
    scenario.stack = setup.stack ? *setup.stack : default_stack(setup.hardware.chip, false, data_dir);
    require_job(scenario.stack, false, origin);
    scenario.plan = make_training_plan(p, setup.chips, {setup.seq_len, setup.global_batch_seqs}, setup.model, setup.hardware.chip, origin);
    check_moe_dispatch(scenario.stack, p.moe_dispatcher, p.ep_overlap, origin);
    scenario.strategy = resolve_strategy(p.strategy.empty() ? default_strategy_name(p) : p.strategy, data_dir);
    apply_zero_stage(scenario.strategy, scenario.plan.zero_stage());
    fold_expert_axes(scenario.strategy, scenario.plan);
    if (setup.cluster) {
        if (setup.cluster->chips() != setup.chips)
            throw InputError(origin, "chips", text(setup.chips) + " chips but the topology has " + text(setup.cluster->chips()));
        scenario.cluster = *setup.cluster;
    } else {
        ClusterShape shape;
        shape.chips = setup.chips;
        shape.domains = setup.domains;
        scenario.cluster = build_cluster(setup.hardware, shape);
    }
    scenario.mesh = place_plan(scenario.cluster, scenario.plan, p.placement);
    return scenario;
}

namespace {

// The divisors of n below n, largest first.
std::vector<double> smaller_divisors(std::int64_t n) {
    std::vector<double> divisors;
    for (std::int64_t d = 1; d * d <= n; ++d)
        if (n % d == 0) {
            if (d < n) divisors.push_back(static_cast<double>(d));
            if (d * d != n && d > 1) divisors.push_back(static_cast<double>(n / d));
        }
    std::sort(divisors.rbegin(), divisors.rend());
    return divisors;
}

std::string micro_batch_choice(bool fits, double per_replica) {
    const std::string whole = std::to_string(static_cast<std::int64_t>(per_replica));
    return fits ? "the largest that fits of the replica's " + whole + " sequences; a micro-batch given is kept"
                : "none of the replica's " + whole + " sequences fits at once, so one at a time; a micro-batch given is kept";
}

}  // namespace

PricedTraining price_training(TrainingSetup setup, const std::filesystem::path& data_dir, const std::string& origin) {
    PricedTraining out{build_training_scenario(setup, data_dir, origin), {}};
    out.report = simulate_training(out.scenario);
    const double per_replica = out.scenario.plan.micro_batch_seqs * out.scenario.plan.microbatches;
    if (setup.plan.micro_batch_seqs > 0 || setup.plan.pp > 1 || out.report.fits || per_replica <= 1) return out;
    for (const double seqs : smaller_divisors(static_cast<std::int64_t>(per_replica))) {
        setup.plan.micro_batch_seqs = seqs;
        TrainingScenario smaller = build_training_scenario(setup, data_dir, origin);
        TrainingReport report = simulate_training(smaller);
        if (!report.fits && seqs > 1) continue;
        out = {std::move(smaller), std::move(report)};
        out.report.micro_batch_choice = micro_batch_choice(out.report.fits, per_replica);
        break;
    }
    return out;
}

}  // namespace ridgeline
