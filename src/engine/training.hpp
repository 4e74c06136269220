#pragma once
// The training step: for a model, a cluster, a strategy and a plan, how long one optimizer step
// takes, what bounds each part, and the memory each chip needs. Pure: specs in, report out.
#include <string>
#include <vector>

#include "collective/collective.hpp"
#include "engine/bound.hpp"
#include "accuracy/like_runs.hpp"
#include "engine/step_model.hpp"
#include "hardware/chip.hpp"
#include "mesh/mesh.hpp"
#include "mesh/plan_axes.hpp"
#include "model/transformer_math.hpp"
#include "sharding/derive.hpp"
#include "sharding/strategy.hpp"
#include "spec/plan.hpp"
#include "stack/stack.hpp"
#include "topology/cluster.hpp"

namespace ridgeline {


// A plan as the engine takes it: the Plan with its defaults resolved by make_training_plan
// (micro-batch, schedule), and what it implies: its mesh axes once expert ranks are folded, and
// the micro-batches of a step.
struct TrainingPlan : Plan {
    AxisSizes axes;               // data, fsdp, tensor, pipeline, context, expert ... sizes
    AxisList expert_folded_axes;  // tensor, context (or part of them: ep_*) axes the expert ranks span besides the expert axis
    double microbatches = 1;      // per replica and step
    // An axis's size (1 where the plan does not have it).
    [[nodiscard]] double size(const std::string& axis) const {
        const auto it = axes.find(axis);
        return it == axes.end() ? 1.0 : static_cast<double>(it->second);
    }
    // A plan axis's size, with the part expert ranks were folded over where it was split.
    [[nodiscard]] double size(PlanAxis axis) const { return size(axis_name(axis)) * size(expert_part_name(axis_name(axis))); }
    // The knobs the step model prices, as the search varies them.
    [[nodiscard]] StepKnobs step_knobs() const;
};

// What is trained on what: the model, the chip and its cluster, the sequence and global batch.
struct TrainingJob {
    ModelSpec model;
    ChipSpec chip;  // with its efficiencies
    Cluster cluster;
    double seq_len = 0;
    double global_batch_seqs = 0;
    Stack stack;  // what software runs it (kernel families, fusion, its overheads)
};

// The stack's once-per-step cost and its wait for the slowest rank on this job: on chips with
// measured kernels only (an efficiency block fitted on runs holds them already).
struct StackStepOverheads {
    double step_overhead_s = 0;
    double straggler_fraction = 0;
};
[[nodiscard]] StackStepOverheads stack_step_overheads(const TrainingJob& job);

struct TrainingScenario : TrainingJob {
    Mesh mesh;  // the plan's axes placed on the cluster
    Strategy strategy;
    TrainingPlan plan;
};

struct StepComponent {
    std::string name;  // "matmuls", "attention", "tensor-parallel comms (exposed)", ...
    double time_s = 0;
    Limit bound;
};

// One average layer on the slowest stage, for one micro-batch.
struct LayerBreakdown {
    double forward_s = 0;        // compute
    double backward_s = 0;       // compute
    double recompute_s = 0;
    double exposed_comm_s = 0;   // tensor, context, expert and weight traffic left uncovered
};

struct TrainingReport {
    double step_time_s = 0;
    double tokens_per_step = 0;
    double tokens_per_s = 0;
    double model_flops_per_token = 0;  // 3 x forward, causal attention
    double mfu = 0;
    double hfu = 0;                    // counting recomputation
    std::vector<StepComponent> components;  // sum to step_time_s
    LayerBreakdown per_layer;
    Limit bound;                       // of the largest component
    MemoryBreakdown memory;
    double hbm_bytes = 0;
    bool fits = true;
    std::vector<DerivedCollective> collectives;  // of one layer, for the breakdown
    // From the held-out residuals of runs like this one (accuracy/training_interval.hpp), where the
    // caller drew one: the engine itself never does.
    std::optional<PredictionInterval> interval;
    // Where no micro-batch was given and the whole per-replica batch does not fit, the caller's
    // choice of a smaller one, said in the report ("" otherwise).
    std::string micro_batch_choice;
    [[nodiscard]] double time_to_train_s(double tokens) const { return tokens / tokens_per_s; }
};

// InputError (naming the plan field) when the plan does not divide the model's heads, layers or
// experts, or the batch into micro-batches.
void check_training_plan(const ModelSpec& model, const TrainingPlan& plan);

// The first stage of the step model, in two parts so that a search can place the same work many
// ways: what one device computes and sends for the plan's axes, strategy and micro-batch
// (independent of the placement), then what that costs on the scenario's mesh.
struct LayoutWork {
    LayerWork dense, moe;  // moe: the model's expert layers (a copy of dense for dense models)
    OutputWork output;     // on the last stage
    DerivedMatmul mtp_projection;  // each multi-token prediction module's, on the last stage
};
[[nodiscard]] LayoutWork derive_layout_work(const TrainingScenario& scenario);

// The costs, with the names of what bounds each (for reports).
struct LayoutCostsReport {
    LayoutCosts costs;
    Bound matmul_bound = Bound::compute;
    std::string tensor_level, context_level, expert_level, weights_level, send_level, step_level;  // link levels
};
class CollectiveMemo;
// `memo` (may be null) remembers collective costs across calls on the same cluster.
[[nodiscard]] LayoutCostsReport cost_layout(const TrainingScenario& scenario, const LayoutWork& work, CollectiveMemo* memo);

// Both stages, with the report's names and shares. InputError (naming the plan field) when the
// plan does not divide the model or the batch.
[[nodiscard]] TrainingReport simulate_training(const TrainingScenario& scenario);

}  // namespace ridgeline
