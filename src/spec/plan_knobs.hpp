#pragma once
// The training plan's knobs beyond its degrees (those are kDegreeFields), a row each: the field a
// scenario file names it by, the flag of `train` and `search train`, the Plan member it sets, what
// the search does with it, its bounds or choices. The flags, the scenario reader, the launch-file
// readers (GivenKnobs) and the search's constraints go through this table, and a test holds the
// scenario schema to it: a new knob is a Plan member, a row here and its meaning in the engine.
#include <array>
#include <bitset>
#include <optional>
#include <stdexcept>
#include <type_traits>
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

// A visitor of the knob's member from one lambda per type.
template <typename... Ts>
struct Overloaded : Ts... {
    using Ts::operator()...;
};
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;  // clang before 17 deduces no aggregate's arguments without it

// What `search train` does with a knob: takes no flag for it, keeps it as given (Plan's default
// when not), or tries every value when it is not given.
enum class InSearch { no, fixed, searched };

struct PlanKnob {
    const char* key;   // scenario-file field
    const char* flag;  // `train` and `search train` flag, without the dashes
    KnobMember member;
    InSearch search;
    const char* help;
    double min = 0, max = 0;     // counts and numbers, inclusive
    bool whole = false;          // a number that must be whole (sequences)
    std::string_view choices{};  // names and dtypes: the values taken, comma-separated (empty: any name)
};

inline constexpr double kMaxKnobCount = 1e12;  // as the JSON readers' largest whole number

inline constexpr std::array<PlanKnob, 21> kPlanKnobs = {{
    {"etp", "etp", &Plan::etp, InSearch::searched, "tensor parallelism inside experts: 1, or tp (default)", 1, kMaxKnobCount},
    {"fold_experts", "fold-experts", &Plan::fold_experts, InSearch::no,
     "expert ranks as Megatron-Core carves them: tensor (with --etp 1), then context, then data ranks"},
    {"vpp", "vpp", &Plan::vpp, InSearch::searched, "virtual pipeline stages per rank (interleaved 1F1B)", 1, kMaxKnobCount},
    {"stage_layers", "stage-layers", &Plan::stage_layers, InSearch::no,
     "layers of each pipeline rank, first to last, e.g. 11,12,12,12,12,12,12,11 (an uneven split)", 1, kMaxKnobCount},
    {"sequence_parallel", "sp", &Plan::sequence_parallel, InSearch::searched, "Megatron sequence parallelism"},
    {"zero", "zero", &Plan::zero, InSearch::searched, "ZeRO stage 0-3 (default: 3 with --fsdp, else 1)", 0, 3},
    {"reshard_after_forward", "reshard-after-forward", &Plan::reshard_after_forward, InSearch::fixed,
     "gather fsdp-sharded weights again for the backward pass (default on)"},
    {"recompute", "recompute", &Plan::recompute, InSearch::searched, "recomputation policy: none, selective, full or another in recompute/ (or a policy file)"},
    {"schedule", "schedule", &Plan::schedule, InSearch::searched, "gpipe, 1f1b, interleaved, zb1p (zero bubble) or dualpipe"},
    {"precision", "precision", &Plan::precision, InSearch::fixed, "matmul precision: bf16, fp16 or fp8", 0, 0, false, "bf16,fp16,fp8"},
    {"micro_batch_seqs", "micro-batch", &Plan::micro_batch_seqs, InSearch::searched, "sequences per micro-batch per replica", 1, 1e9, true},
    {"strategy", "strategy", &Plan::strategy, InSearch::searched, "strategy name or file (default: chosen from the degrees)"},
    {"overlap", "overlap", &Plan::overlap, InSearch::searched, "overlap data-parallel communication with compute (default on)"},
    {"tp_overlap", "tp-overlap", &Plan::tp_overlap, InSearch::searched, "overlap tensor-parallel collectives with GEMMs"},
    {"moe_dispatcher", "moe-dispatcher", &Plan::moe_dispatcher, InSearch::fixed,
     "MoE token dispatcher the stack offers: alltoall (default) or deepep (one fabric crossing per node)", 0, 0, false, "alltoall,deepep"},
    {"ep_overlap", "ep-overlap", &Plan::ep_overlap, InSearch::fixed, "hide the expert all-to-all under another micro-batch's compute (where the stack can)"},
    {"fp8_dispatch", "fp8-dispatch", &Plan::fp8_dispatch, InSearch::no,
     "routed tokens cross the expert all-to-all in fp8, the combine in bf16 (DeepEP, with --precision fp8)"},
    {"mtp_depth", "mtp-depth", &Plan::mtp_depth, InSearch::fixed, "multi-token prediction modules trained beside the model (DeepSeek-V3: 1)", 0,
     static_cast<double>(kMaxMtpDepth)},
    {"expert_imbalance", "expert-imbalance", &Plan::expert_imbalance, InSearch::fixed,
     "busiest expert rank's routed tokens over the mean (default 1: balanced routing)", 1, 1e6},
    {"offload_optimizer", "offload-optimizer", &Plan::offload_optimizer, InSearch::searched, "optimizer state in host memory"},
    {"placement", "placement", &Plan::placement, InSearch::searched,
     "plan axes innermost first, e.g. tensor,data,pipeline (default: most communication-hungry innermost)"},
}};

// The row of a Plan member; a member with no row is a programming error.
template <typename T>
[[nodiscard]] constexpr std::size_t knob_index(T Plan::*member) {
    for (std::size_t i = 0; i < kPlanKnobs.size(); ++i)
        if (const auto* row = std::get_if<T Plan::*>(&kPlanKnobs[i].member); row && *row == member) return i;
    throw std::logic_error("not a plan knob");
}

// Knobs a flag, file or launch configuration fixed: their values in `plan` (Plan's defaults for
// the rest) and which rows were given.
struct GivenKnobs {
    Plan plan;
    std::bitset<kPlanKnobs.size()> given;
    template <typename T>
    [[nodiscard]] std::optional<T> knob(T Plan::*member) const {
        return given[knob_index(member)] ? std::optional<T>(plan.*member) : std::nullopt;
    }
    template <typename T>
    void fix(T Plan::*member, std::type_identity_t<T> value) {
        plan.*member = std::move(value);
        given.set(knob_index(member));
    }
    // The given knobs set on `target`, the rest left as they are.
    void apply(Plan& target) const {
        for (std::size_t i = 0; i < kPlanKnobs.size(); ++i)
            if (given[i]) std::visit([&](auto member) { target.*member = plan.*member; }, kPlanKnobs[i].member);
    }
};

}  // namespace ridgeline
