// A torchtitan TOML job file (torchtitan v0.2.2: emitters/torchtitan.json).
#include <string>

#include "emit/torchtitan_split.hpp"
#include "emit/training_emitters.hpp"

namespace ridgeline::emit_detail {

namespace {

using Int = std::int64_t;

Int whole(double value) { return static_cast<Int>(value); }
std::string text(Int value) { return std::to_string(value); }

// Pipeline settings whose split of the layers over torchtitan's stages puts on each rank the
// layers the plan gives it: the weights torchtitan gives the embedding and the output (0 for an
// even split), and its layers per stage. Refuses a split torchtitan cannot make.
void pipeline_split(EmitWriter& w, const TrainingScenario& s, Int pp, Int vpp) {
    const Int layers = s.model.n_layers, stages = pp * vpp;
    std::vector<Int> wanted = s.plan.stage_layers;
    if (wanted.empty()) {
        if (layers % stages != 0)
            w.refuse("vpp", "torchtitan splits whole layers: " + text(layers) + " layers do not fill " + text(pp) + " x " + text(vpp) +
                                " stages evenly (give --stage-layers for an uneven split)");
        wanted.assign(static_cast<std::size_t>(pp), layers / pp);
    }
    for (Int first = 0; first <= 16; ++first) {
        for (Int last = 0; last <= 16; ++last) {
            const auto split = torchtitan_stage_layers(stages, layers, first, last);
            if (!split || layers_per_rank(*split, pp) != wanted) continue;
            const Int per_stage = (layers + first + last + stages - 1) / stages;
            if (torchtitan_stage_count(pp, vpp > 1, per_stage, layers, first, last) != stages) continue;
            w.set("layers_per_stage", per_stage);
            w.set("first_stage_less_layers", first);
            w.set("last_stage_less_layers", last);
            return;
        }
    }
    w.refuse("stage_layers", "torchtitan weighs the embedding and the output as whole layers and spreads the rest evenly over its stages "
                             "(pipeline_parallel_first/last_stage_less_layers); no weights up to 16 give this plan's split");
}

}  // namespace

void torchtitan(EmitWriter& w, const TrainingScenario& s) {
    const TrainingPlan& p = s.plan;  // resolved: dp counts the chips
    if (s.chip.kind == ChipKind::tpu) w.refuse("hardware", "torchtitan runs on GPUs and " + s.chip.name + " is a TPU (--emit maxtext writes TPU plans)");
    if (w.maps("model", s.model.name)) w.choose("model", s.model.name, "model");
    else w.note("set model.name and model.flavor: emitters/torchtitan.json maps no torchtitan flavor to " + s.model.name);
    w.set("seq_len", whole(s.seq_len));
    // Data parallelism: FSDP2 over the fsdp ranks (dp_shard), DDP or HSDP replicas over the rest.
    const Int shard = p.fsdp, replicate = p.dp / p.fsdp;
    if (shard > 1 && p.zero_stage() != 3) w.refuse("zero", "torchtitan shards with FSDP2, which shards the weights too (ZeRO-3); the plan says ZeRO-" + text(p.zero_stage()));
    if (shard == 1 && p.zero_stage() != 0 && p.dp > 1)
        w.refuse("zero", "torchtitan shards optimizer state only with FSDP2 (data_parallel_shard_degree); ZeRO-" + text(p.zero_stage()) +
                             " over replicas is no setting of it: give --fsdp, or --zero 0");
    w.set("dp_replicate", replicate);
    w.set("dp_shard", shard);
    if (shard > 1) w.choose("reshard", p.reshards_after_forward() ? "true" : "false", "reshard_after_forward");
    if (!p.overlap && p.dp > 1) w.refuse("overlap", "torchtitan always overlaps data-parallel communication (FSDP2 prefetching, DDP buckets)");
    w.set("tp", p.tp);
    if (p.tp > 1 && !p.sequence_parallel)
        w.refuse("sp", "torchtitan's tensor parallelism always shards the norms' activations over the sequence (SequenceParallel in apply_tp): give --sp");
    if (p.tp_overlap) w.set_switch("async_tp", true);
    w.set("cp", p.cp);
    if (p.cp > 1) w.note("torchtitan also shards the weights over the context-parallel ranks (FSDP2 over dp_shard x cp); Ridgeline's plan keeps them whole there");
    // Micro-batches: the pipeline's (local_batch_size / microbatch size), or gradient accumulation's.
    const Int micro = whole(p.micro_batch_seqs), global = whole(s.global_batch_seqs);
    w.set("pp", p.pp);
    if (p.pp > 1) {
        const Int vpp = p.vpp;
        const std::string schedule = schedule_name(p.schedule);
        const bool looped = schedule == "interleaved";
        if (looped != (vpp > 1))
            w.refuse("schedule", looped ? "torchtitan's Interleaved1F1B holds 2 or more stages a rank (give --vpp)" : "torchtitan's " + schedule + " holds one stage a rank (vpp " + text(vpp) + ")");
        w.choose("schedule", schedule, "schedule");
        pipeline_split(w, s, p.pp, vpp);
        w.set("pp_microbatch", micro);
        w.set("local_batch", global / p.dp);
    } else {
        w.set("local_batch", micro);
    }
    w.set("global_batch", global);
    if (p.ep > 1) {
        const Int etp = p.etp == 0 ? p.tp : p.etp;
        if (etp != 1 && etp != p.tp) w.refuse("etp", "torchtitan's expert tensor parallelism is 1 or the tensor-parallel degree");
        if (!p.fold_experts && (p.cp > 1 || (etp == 1 && p.tp > 1)))
            w.refuse("fold_experts", "torchtitan carves expert ranks from the tensor ranks (with etp 1) and the context ranks before the sharded "
                                     "data-parallel ones; give --fold-experts to plan it that way");
        if ((shard * p.cp * (p.tp / etp)) % p.ep != 0)
            w.refuse("ep", "torchtitan carves the " + text(p.ep) + " expert ranks from data_parallel_shard_degree x cp x tp / etp (" +
                               text(shard * p.cp * (p.tp / etp)) + " ranks), not from replicas: give --fsdp");
        w.set("ep", p.ep);
        w.set("etp", etp);
    }
    if (s.model.moe) w.choose("moe_dispatcher", p.moe_dispatcher, "moe_dispatcher");
    w.choose("recompute", p.recompute.name, "recompute");
    w.choose("precision", std::string(dtype_name(p.precision)), "precision");
    if (p.precision == Dtype::fp8 && s.model.moe) w.note("the experts' grouped GEMMs stay bf16 (quantize.grouped_mm.float8 is a prototype); Ridgeline priced them in fp8");
    // torch.compile: what the torchtitan stack prices (and async TP needs); eager PyTorch runs without.
    w.set_switch("compile", s.stack.name != "pytorch-eager" || p.tp_overlap);
    if (s.stack.name != "torchtitan" && s.stack.name != "pytorch-eager")
        w.note("predicted with stack " + s.stack.name + "; --stack torchtitan predicts what this file runs");
    if (p.offload_optimizer)
        w.refuse("offload_optimizer", "torchtitan's CPU offload (training.enable_cpu_offload) moves parameters and gradients to the host too, not the optimizer alone");
    if (p.ep_overlap)
        w.refuse("ep_overlap", "torchtitan overlaps the expert all-to-all only inside its DualPipeV schedule, which Ridgeline does not model");
    if (p.mtp_depth > 0) w.refuse("mtp_depth", "torchtitan v0.2.2 trains no multi-token prediction module");
    if (p.fp8_dispatch) w.refuse("fp8_dispatch", "torchtitan v0.2.2 dispatches routed tokens in bf16");
    check_rank_order(w, s, "torchtitan places ranks tp, cp, dp_shard (the expert ranks among them), dp_replicate, pp (innermost first)",
                     [](const std::string& axis) {
                         if (axis == axis_name(PlanAxis::tensor)) return 0;
                         if (axis == axis_name(PlanAxis::context)) return 1;
                         if (axis == axis_name(PlanAxis::fsdp) || axis == axis_name(PlanAxis::expert)) return 2;
                         if (axis == axis_name(PlanAxis::pipeline)) return 4;
                         return 3;  // data
                     });
}

}  // namespace ridgeline::emit_detail
