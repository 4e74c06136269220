#pragma once
// One parallel plan, as train, validate, serve and both searches take it: the degrees of the
// mesh axes and the knobs. Serving reads the degrees and the dtypes; training all but
// `weights` and `kv_cache`.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "mesh/plan_axes.hpp"
#include "model/recompute_policy.hpp"
#include "spec/pipeline_schedule.hpp"

namespace ridgeline {

// dp counts the fsdp and expert ranks (0: what the chips leave).
struct Degrees {
    std::int64_t dp = 0;
    std::int64_t tp = 1, pp = 1, cp = 1, ep = 1, fsdp = 1;
    [[nodiscard]] std::int64_t data() const { return dp / fsdp / ep; }  // replicas beyond fsdp and expert
    // Sizes of the plan's mesh axes, in PlanAxis order.
    [[nodiscard]] std::array<std::int64_t, kPlanAxes> sizes() const { return {data(), fsdp, ep, tp, cp, pp}; }
    // The same by axis name, as strategies name the axes.
    [[nodiscard]] std::map<std::string, std::int64_t> axis_sizes() const {
        std::map<std::string, std::int64_t> named;
        const auto s = sizes();
        for (std::size_t i = 0; i < kPlanAxes; ++i) named[kPlanAxisNames[i]] = s[i];
        return named;
    }
    // Chips of one model replica, and of the whole plan, where the plan serves whole replicas.
    [[nodiscard]] std::int64_t replica_chips() const { return tp * pp * cp; }
    [[nodiscard]] std::int64_t chips() const { return dp * replica_chips(); }
};

// A plan's degrees as given: unset ones are free (a search) or what the chips leave (dp).
struct GivenDegrees {
    std::optional<std::int64_t> dp, tp, pp, cp, ep, fsdp;
};

// The degrees by the names people write them (flags --tp, file fields "tp"): flags, scenario and
// run-record fields and the plan rules (spec/plan_check) read them from this list. A new kind is a
// row here and its meaning elsewhere: its mesh axis (mesh/plan_axes), its rules, its strategy use.
struct DegreeField {
    const char* key;
    std::int64_t Degrees::*value;
    std::optional<std::int64_t> GivenDegrees::*given;
    const char* help;
};
inline constexpr std::array<DegreeField, 6> kDegreeFields = {{
    {"dp", &Degrees::dp, &GivenDegrees::dp, "data-parallel degree, counting the fsdp and expert ranks"},
    {"tp", &Degrees::tp, &GivenDegrees::tp, "tensor-parallel degree"},
    {"pp", &Degrees::pp, &GivenDegrees::pp, "pipeline stages"},
    {"cp", &Degrees::cp, &GivenDegrees::cp, "context-parallel degree"},
    {"ep", &Degrees::ep, &GivenDegrees::ep, "expert-parallel degree (carved from the data-parallel replicas)"},
    {"fsdp", &Degrees::fsdp, &GivenDegrees::fsdp, "parameter-sharding degree (ZeRO-3)"},
}};

// The MoE token dispatchers a plan may ask for and a stack may offer.
[[nodiscard]] inline bool known_moe_dispatcher(const std::string& name) { return name == "alltoall" || name == "deepep"; }

struct Plan : Degrees {
    std::int64_t etp = 0;  // tensor parallelism inside experts: 0 means as tp, 1 means experts whole
    // Expert ranks as Megatron-Core carves them (and run records define them): ep takes the
    // innermost ranks of a stage, the tensor ranks where etp is 1, then context, then data; false:
    // ep is carved from the data-parallel replicas alone.
    bool fold_experts = false;
    std::int64_t vpp = 1;
    std::vector<std::int64_t> stage_layers;  // an uneven pipeline split (empty: even)
    bool sequence_parallel = false;
    std::optional<int> zero;  // ZeRO stage; unset: 3 with fsdp, else 1
    std::optional<bool> reshard_after_forward;  // fsdp only; unset: reshard (ZeRO-3)
    RecomputePolicy recompute;  // none
    double micro_batch_seqs = 0;  // 0: one per replica with pipelining, else the whole replica batch
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    std::string strategy;  // empty: chosen from the degrees
    Dtype precision = Dtype::bf16;  // GEMM arithmetic (fp8: GEMMs only)
    Dtype weights = Dtype::bf16;    // weights as stored for serving: int8/int4 weight-only, fp8 (fp8 GEMMs)
    // Serving: the attention projections as a checkpoint stores them where it quantises only the rest
    // (Meta's Llama 3.1 405B FP8 keeps them bf16); unset: as `weights`.
    std::optional<Dtype> attention_weights;
    Dtype kv_cache = Dtype::bf16;
    bool overlap = true;
    bool tp_overlap = false;
    std::string moe_dispatcher = "alltoall";  // one the stack offers: alltoall or deepep
    bool ep_overlap = false;                  // hide the expert AllToAll under another micro-batch's compute
    bool fp8_dispatch = false;                // routed tokens cross the expert AllToAll in fp8 (DeepEP)
    double expert_imbalance = 1;              // busiest expert rank's routed tokens over the mean
    std::int64_t mtp_depth = 0;               // multi-token prediction modules trained beside the model
    bool offload_optimizer = false;
    std::vector<std::string> placement;  // mesh axes innermost first (empty: hungriest innermost)
    // The defaults of what a plan leaves unset, written once.
    [[nodiscard]] int zero_stage() const { return zero.value_or(fsdp > 1 ? 3 : 1); }
    [[nodiscard]] bool reshards_after_forward() const { return reshard_after_forward.value_or(true); }
    // The GEMMs' arithmetic: fp8 weights compute in fp8, weight-only quantisation in `precision`.
    [[nodiscard]] Dtype arithmetic() const { return arithmetic_for(weights); }
    [[nodiscard]] Dtype attention_weight_dtype() const { return attention_weights.value_or(weights); }
    [[nodiscard]] Dtype arithmetic_for(Dtype stored) const { return stored == Dtype::fp8 ? Dtype::fp8 : precision; }
};

}  // namespace ridgeline
