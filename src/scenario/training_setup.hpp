#pragma once
// From the plan people write (dp, tp, pp, cp, ep, fsdp, ZeRO stage, micro-batch ...) to the
// scenario the engine takes: the strategy file that expresses the plan, its mesh axes placed on
// the cluster, and the micro-batch schedule. Shared by `train` and `validate`.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/training.hpp"
#include "hardware/system.hpp"
#include "spec/plan_check.hpp"

namespace ridgeline {

struct TrainingSetup {
    ModelSpec model;
    Hardware hardware;
    std::optional<Cluster> cluster;  // a custom topology (hardware/topologies/*.json) instead of the system's
    std::int64_t chips = 0;
    std::int64_t domains = 0;  // TPU slices or GPU nodes; 0: derived
    double seq_len = 0;
    double global_batch_seqs = 0;
    Plan plan;
    std::optional<Stack> stack;  // empty: the chip's default (default_stack_name)
};

// The plan's axes, batch split and knobs, checked against the chips, batch, model and chip.
// `origin` names the flag set or file in errors (field names follow Plan).
[[nodiscard]] TrainingPlan make_training_plan(const Plan& spec, std::int64_t chips, const PlanWorkload& workload,
                                              const ModelSpec& model, const ChipSpec& chip, const std::string& origin);

// Layers over pipeline stages as evenly as they go (the first stages take one more); the largest
// stage sets the pace.
[[nodiscard]] std::vector<std::int64_t> balanced_stage_layers(std::int64_t layers, std::int64_t stages);

// The strategy a plan gets when it names none.
[[nodiscard]] std::string default_strategy_name(const Plan& spec);

// ZeRO below 1 or 2 keeps optimizer state or gradients whole on every data-parallel rank.
void apply_zero_stage(Strategy& strategy, int zero_stage);
// Expert ranks folded over tensor, context or fsdp ranks: the expert weights split over those
// axes, and a split axis's inner part joins every dimension the axis splits.
void fold_expert_axes(Strategy& strategy, const TrainingPlan& plan);

// The plan's axes laid on the cluster (in `placement` order when given).
[[nodiscard]] Mesh place_plan(const Cluster& cluster, const TrainingPlan& plan, const std::vector<std::string>& placement);

// `origin` names the flag set or file in errors (field names follow Plan).
[[nodiscard]] TrainingScenario build_training_scenario(const TrainingSetup& setup, const std::filesystem::path& data_dir,
                                                       const std::string& origin);

// The scenario and its step where the setup gives no micro-batch and has one stage: the replica's
// whole batch where it fits, else the largest divisor of it that does (1 where none does), with
// `micro_batch_choice` saying which was taken and why.
struct PricedTraining {
    TrainingScenario scenario;
    TrainingReport report;
};
[[nodiscard]] PricedTraining price_training(TrainingSetup setup, const std::filesystem::path& data_dir, const std::string& origin);

}  // namespace ridgeline
