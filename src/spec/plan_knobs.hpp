#pragma once
// The training plan's knobs beyond its degrees (those are kDegreeFields), a row each: the field a
// scenario file names it by, the flag of `train`, the Plan member it sets, its bounds or choices.
// `train`'s flags and the scenario reader iterate over this table, and the scenario schema is held
// to it by a test: a new knob is a Plan member, a row here and its meaning in the engine.
#include <array>
#include <string_view>
#include <variant>

#include "model/plausible_sizes.hpp"
#include "spec/plan.hpp"

namespace ridgeline {

// What a knob holds follows from its member's type: a count, a switch (optional: unset keeps the
// engine's default), a ZeRO stage, a number, a name, a dtype, a schedule, a recomputation policy
// (a name or a file), a list of counts or a list of names.
using KnobMember = std::variant<std::int64_t Plan::*, bool Plan::*, std::optional<bool> Plan::*, std::optional<int> Plan::*,
                                double Plan::*, std::string Plan::*, Dtype Plan::*, PipelineSchedule Plan::*,
                                RecomputePolicy Plan::*, std::vector<std::int64_t> Plan::*, std::vector<std::string> Plan::*>;

struct PlanKnob {
    const char* key;   // scenario-file field
    const char* flag;  // `train` flag, without the dashes
    KnobMember member;
    const char* help;
    double min = 0, max = 0;     // counts and numbers, inclusive
    bool whole = false;          // a number that must be whole (sequences)
    std::string_view choices{};  // names and dtypes: the values taken, comma-separated (empty: any name)
};

inline constexpr double kMaxKnobCount = 1e12;  // as the JSON readers' largest whole number

inline constexpr std::array<PlanKnob, 21> kPlanKnobs = {{
    {"etp", "etp", &Plan::etp, "tensor parallelism inside experts: 1, or tp (default)", 1, kMaxKnobCount},
    {"fold_experts", "fold-experts", &Plan::fold_experts,
     "expert ranks as Megatron-Core carves them: tensor (with --etp 1), then context, then data ranks"},
    {"vpp", "vpp", &Plan::vpp, "virtual pipeline stages per rank (interleaved 1F1B)", 1, kMaxKnobCount},
    {"stage_layers", "stage-layers", &Plan::stage_layers,
     "layers of each pipeline rank, first to last, e.g. 11,12,12,12,12,12,12,11 (an uneven split)", 1, kMaxKnobCount},
    {"sequence_parallel", "sp", &Plan::sequence_parallel, "Megatron sequence parallelism"},
    {"zero", "zero", &Plan::zero, "ZeRO stage 0-3 (default: 3 with --fsdp, else 1)", 0, 3},
    {"reshard_after_forward", "reshard-after-forward", &Plan::reshard_after_forward,
     "gather fsdp-sharded weights again for the backward pass (default on)"},
    {"recompute", "recompute", &Plan::recompute, "recomputation policy: none, selective, full or another in recompute/ (or a policy file)"},
    {"schedule", "schedule", &Plan::schedule, "gpipe, 1f1b, interleaved, zb1p (zero bubble) or dualpipe"},
    {"precision", "precision", &Plan::precision, "matmul precision: bf16, fp16 or fp8", 0, 0, false, "bf16,fp16,fp8"},
    {"micro_batch_seqs", "micro-batch", &Plan::micro_batch_seqs, "sequences per micro-batch per replica", 1, 1e9, true},
    {"strategy", "strategy", &Plan::strategy, "strategy name or file (default: chosen from the degrees)"},
    {"overlap", "overlap", &Plan::overlap, "overlap data-parallel communication with compute (default on)"},
    {"tp_overlap", "tp-overlap", &Plan::tp_overlap, "overlap tensor-parallel collectives with GEMMs"},
    {"moe_dispatcher", "moe-dispatcher", &Plan::moe_dispatcher,
     "MoE token dispatcher the stack offers: alltoall (default) or deepep (one fabric crossing per node)", 0, 0, false, "alltoall,deepep"},
    {"ep_overlap", "ep-overlap", &Plan::ep_overlap, "hide the expert all-to-all under another micro-batch's compute (where the stack can)"},
    {"fp8_dispatch", "fp8-dispatch", &Plan::fp8_dispatch,
     "routed tokens cross the expert all-to-all in fp8, the combine in bf16 (DeepEP, with --precision fp8)"},
    {"mtp_depth", "mtp-depth", &Plan::mtp_depth, "multi-token prediction modules trained beside the model (DeepSeek-V3: 1)", 0,
     static_cast<double>(kMaxMtpDepth)},
    {"expert_imbalance", "expert-imbalance", &Plan::expert_imbalance,
     "busiest expert rank's routed tokens over the mean (default 1: balanced routing)", 1, 1e6},
    {"offload_optimizer", "offload-optimizer", &Plan::offload_optimizer, "optimizer state in host memory"},
    {"placement", "placement", &Plan::placement,
     "plan axes innermost first, e.g. tensor,data,pipeline (default: most communication-hungry innermost)"},
}};

}  // namespace ridgeline
