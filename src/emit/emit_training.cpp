#include "emit/emit.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "emit/frameworks.hpp"
#include "emit/training_emitters.hpp"
#include "model/recompute_catalog.hpp"
#include "report/table.hpp"

namespace ridgeline {

namespace {

using Int = std::int64_t;

Int whole(double value) { return static_cast<Int>(value); }
std::string text(Int value) { return std::to_string(value); }

}  // namespace

namespace emit_detail {

void check_rank_order(EmitWriter& w, const TrainingScenario& s, const std::string& order, int (*group)(const std::string&)) {
    int last = 0;
    std::string last_name;
    for (const PlacedAxis& a : s.mesh.axes) {
        if (a.axis.size <= 1) continue;
        const int g = group(base_axis_name(a.axis.name));  // a split axis's expert part sits where the axis does
        if (g < last) w.refuse("placement", order + "; this plan puts " + a.axis.name + " outside " + last_name);
        last = g;
        last_name = a.axis.name;
    }
}

// The keys a framework spells these model features with.
struct FeatureKeys {
    const char* mla;
    const char* shared_experts;
    const char* window;
    const char* qk_norm;
};

// A note naming the model's features an emitted file leaves out (`unwritten`: the framework's own
// first, each after ", "), so that the user adds them rather than trains another model.
void note_unwritten(EmitWriter& w, const ModelSpec& m, std::string unwritten, const FeatureKeys& keys) {
    const auto add = [&](bool has, const std::string& what, const char* key) {
        if (has) unwritten += ", " + what + " (" + key + ")";
    };
    add(m.mla.has_value(), "multi-latent attention", keys.mla);
    add(m.moe && (m.moe->n_shared_experts > 0 || m.moe->first_dense_layers > 0 || m.moe->layer_step > 1),
        "shared experts and dense layers among the MoE ones", keys.shared_experts);
    add(m.window.has_value(), "local attention windows", keys.window);
    add(m.qk_norm, "the q/k norms", keys.qk_norm);
    if (!unwritten.empty()) w.note("the model's " + unwritten.substr(2) + " are not written: add them");
}

// Megatron-Core / NeMo command-line arguments.
// The model's shape, so that Megatron-LM can start from the file (and --from reads it back against
// --model). What Megatron spells with flags of its own is named in a note, not guessed at.
void model_shape(EmitWriter& w, const ModelSpec& m, Int seq_len) {
    w.set("d_model", m.d_model);
    w.set("d_ff", m.d_ff);
    w.set("heads", m.n_heads);
    if (m.n_kv_heads < m.n_heads && !m.mla) {
        w.set_switch("gqa", true);
        w.set("kv_groups", m.n_kv_heads);
    }
    w.set("head_dim", m.head_dim);
    w.set("max_positions", std::max(seq_len, m.context_length));
    if (m.moe) {
        w.set("experts", m.moe->n_experts);
        w.set("top_k", m.moe->top_k);
        w.set("d_ff_expert", m.moe->d_ff_expert);
    }
    if (m.mlp == MlpKind::gated) w.set_switch("swiglu", true);
    if (!m.tied_embeddings) w.set_switch("untie", true);
    if (!m.linear_bias) w.set_switch("no_linear_bias", true);
    w.set_text("normalization", m.norm == NormKind::rmsnorm ? "RMSNorm" : "LayerNorm");
    w.set_text("position_embedding", m.learned_position_embeddings > 0 ? "learned_absolute" : "rope");
    note_unwritten(w, m, "",
                   {"--multi-latent-attention and its ranks", "--moe-shared-expert-intermediate-size, --moe-layer-freq", "--window-size",
                    "--qk-layernorm"});
    w.note("the tokenizer and vocabulary (" + std::to_string(m.vocab_size) + " tokens) come from your data arguments");
}

void megatron(EmitWriter& w, const TrainingScenario& s) {
    const TrainingPlan& p = s.plan;  // resolved: dp counts the chips
    if (s.chip.kind == ChipKind::tpu) w.refuse("hardware", "Megatron-Core runs on NVIDIA GPUs and " + s.chip.name + " is a TPU (--emit maxtext writes TPU plans)");
    const Int layers = s.model.n_layers;
    w.set("layers", layers);
    model_shape(w, s.model, whole(s.seq_len));
    w.set("seq_len", whole(s.seq_len));
    w.set("tp", p.tp);
    w.set("pp", p.pp);
    const Int vpp = p.vpp;
    if (p.pp > 1) {
        w.choose("schedule", schedule_name(p.schedule), "schedule");
        const std::vector<Int>& stages = p.stage_layers;
        const bool even = stages.empty() || std::all_of(stages.begin(), stages.end(), [&](Int n) { return n == stages.front(); });
        if (!even) {
            // Megatron-Core gives the first and last stages their own counts and splits the rest evenly.
            const std::vector<Int> middle(stages.begin() + 1, stages.end() - 1);
            if (!middle.empty() && !std::all_of(middle.begin(), middle.end(), [&](Int n) { return n == middle.front(); }))
                w.refuse("stage_layers", "Megatron-Core sets the first and last pipeline stages' layers apart "
                                         "(--decoder-first/last-pipeline-num-layers) and splits the rest evenly; the middle stages here differ");
            if (middle.empty() || stages.front() != middle.front()) w.set("first_stage_layers", stages.front());
            if (middle.empty() || stages.back() != middle.front()) w.set("last_stage_layers", stages.back());
        }
        if (vpp > 1) {
            if (even) w.set("vpp_layers", layers / (p.pp * vpp));
            else w.set("vpp", vpp);
        }
    }
    if (p.cp > 1) w.set("cp", p.cp);
    if (p.ep > 1) {
        const Int etp = p.etp == 0 ? p.tp : p.etp;
        if (!p.fold_experts && (p.cp > 1 || (etp == 1 && p.tp > 1)))
            w.refuse("fold_experts", "Megatron-Core carves expert ranks from the tensor ranks (with etp 1) and the context ranks before the "
                                     "data-parallel ones; give --fold-experts to plan it that way");
        w.set("ep", p.ep);
        w.set("etp", etp);
    }
    if (p.sequence_parallel && p.tp > 1) w.set_switch("sp", true);
    w.set("micro_batch", whole(p.micro_batch_seqs));
    w.set("global_batch", whole(s.global_batch_seqs));
    if (p.recompute.name.starts_with(kMegatronPolicyPrefix)) {  // Megatron-Core's own module list
        const EmitEntry modules{"--recompute-modules", {EmitValue::Kind::list, p.recompute.name.substr(std::string_view(kMegatronPolicyPrefix).size() + 1)}};
        w.choose("recompute", "selective", "recompute", &modules);
    } else {
        w.choose("recompute", p.recompute.name, "recompute");
    }
    if (p.fsdp > 1 && p.fsdp != p.dp)
        w.refuse("fsdp", "Megatron FSDP shards over the whole data-parallel group (" + text(p.dp) + " ranks); fsdp " + text(p.fsdp) +
                             " of them is hybrid sharding, which this emitter does not write");
    if (p.fsdp > 1 && p.zero_stage() != 3) w.refuse("zero", "fsdp shards parameters (ZeRO-3), but the plan says ZeRO-" + text(p.zero_stage()));
    if (p.fsdp == 1 && p.zero_stage() == 3)
        w.refuse("zero", "ZeRO-3 without fsdp shards no parameters in Ridgeline's plan; give --fsdp to shard them, or --zero 2");
    if (p.fsdp > 1 && !p.reshards_after_forward())
        w.refuse("reshard_after_forward", "Megatron FSDP gathers the weights again for the backward pass; it has no setting to keep them");
    w.choose("zero", text(p.zero_stage()), "zero");
    if (p.overlap && p.dp > 1) {
        w.set_switch("overlap_grad_reduce", true);
        if (p.zero_stage() >= 1) w.set_switch("overlap_param_gather", true);
    }
    if (p.tp_overlap) {
        if (!p.sequence_parallel || p.tp == 1)
            w.refuse("tp_overlap", "Megatron-Core overlaps tensor-parallel communication with GEMMs only under sequence parallelism with tp > 1");
        w.set_switch("tp_overlap", true);
    }
    w.choose("precision", std::string(dtype_name(p.precision)), "precision");
    if (s.model.moe) w.choose("moe_dispatcher", p.moe_dispatcher, "moe_dispatcher");
    if (p.ep_overlap) w.set_switch("ep_overlap", true);
    if (p.fp8_dispatch) w.refuse("fp8_dispatch", "this emitter knows no Megatron-Core setting that dispatches routed tokens in fp8");
    if (p.mtp_depth > 0) w.set("mtp_depth", p.mtp_depth);
    if (p.offload_optimizer) w.choose("offload_optimizer", "on", "offload_optimizer");
    // Megatron-Core numbers ranks tensor, then context and expert, then data, then pipeline
    // (innermost first); a plan placed otherwise is not what it would run.
    check_rank_order(w, s, "Megatron-Core places ranks tensor, context/expert, data, pipeline (innermost first)", [](const std::string& axis) {
        if (axis == axis_name(PlanAxis::tensor)) return 0;
        if (axis == axis_name(PlanAxis::context) || axis == axis_name(PlanAxis::expert)) return 1;
        if (axis == axis_name(PlanAxis::pipeline)) return 3;
        return 2;  // data, fsdp
    });
}

// The model's shape in base.yml's keys (model_name stays "default", so these are what MaxText
// builds). What base.yml spells otherwise is named in a note, not guessed at.
void maxtext_model_shape(EmitWriter& w, const ModelSpec& m) {
    w.set("layers", m.n_layers);
    w.set("d_model", m.d_model);
    w.set("d_ff", m.d_ff);
    w.set("heads", m.n_heads);
    w.set("kv_heads", m.n_kv_heads);
    w.set("head_dim", m.head_dim);
    w.set("vocab", m.vocab_size);
    if (m.moe) {
        w.set("experts", m.moe->n_experts);
        w.set("top_k", m.moe->top_k);
        w.set("d_ff_expert", m.moe->d_ff_expert);
    }
    std::string unwritten;
    if (m.mlp != MlpKind::gated) unwritten += ", MLP activation (mlp_activations; base.yml's default is a SiLU-gated MLP)";
    if (m.norm != NormKind::rmsnorm) unwritten += ", LayerNorm (decoder_block; base.yml's llama2 block uses RMSNorm)";
    if (m.tied_embeddings) unwritten += ", tied embeddings (logits_via_embedding)";
    note_unwritten(w, m, unwritten, {"attention_type: mla and its ranks", "shared_experts, first_num_dense_layers", "sliding_window_size", "use_qk_norm"});
}

// A MaxText YAML override.
void maxtext(EmitWriter& w, const TrainingScenario& s) {
    const TrainingPlan& p = s.plan;  // resolved: dp counts the chips
    maxtext_model_shape(w, s.model);
    w.set("seq_len", whole(s.seq_len));
    w.set_number("per_device_batch", s.global_batch_seqs / static_cast<double>(s.cluster.chips()));
    // Each plan axis split between the chips' own links (ICI, level 0) and the network between slices (DCN).
    for (std::size_t i = 0; i < kPlanAxes; ++i) {
        const std::string name = kPlanAxisNames[i];
        Int ici = 1, dcn = 1;
        const int found = s.mesh.find(name);
        if (found >= 0)
            for (const AxisSpan& span : s.mesh.axes[static_cast<std::size_t>(found)].spans)
                (s.cluster.dims[static_cast<std::size_t>(span.dim)].level == 0 ? ici : dcn) *= span.extent;
        w.set("ici." + name, ici);
        w.set("dcn." + name, dcn);
    }
    const Int microbatches = whole(p.microbatches);
    if (p.pp > 1) {
        w.choose("schedule", schedule_name(p.schedule), "schedule");
        if (!p.stage_layers.empty()) w.refuse("stage_layers", "MaxText's pipeline gives every stage the same layers (num_layers_per_pipeline_stage)");
        const Int vpp = p.vpp;
        w.set("stage_layers", s.model.n_layers / (p.pp * vpp));
        w.set("pipeline_repeats", vpp);
        if (microbatches % p.pp != 0)
            w.refuse("micro_batch", "MaxText needs the pipeline's micro-batches (" + text(microbatches) + ") in a multiple of its " + text(p.pp) + " stages");
        w.set("pipeline_microbatches", microbatches);
    } else if (microbatches > 1) {
        w.set("gradient_accumulation", microbatches);
    }
    w.choose("recompute", p.recompute.name, "recompute");
    if (p.size(PlanAxis::data) > 1) w.choose("zero_over_data", text(p.zero_stage()), "zero");
    w.choose("precision", std::string(dtype_name(p.precision)), "precision");
    if (p.offload_optimizer) w.set_switch("offload_optimizer", true);
    // What MaxText cannot be told.
    if (!p.expert_folded_axes.empty()) w.refuse("fold_experts", "MaxText's expert axis is an axis of its own; it does not fold into tensor or context");
    if (p.ep > 1 && p.etp == 1 && p.tp > 1) w.refuse("etp", "MaxText splits the experts' weights over the tensor axis too; it cannot keep them whole (etp 1)");
    if (p.sequence_parallel && p.tp > 1)
        w.refuse("sp", "MaxText's tensor axis has no Megatron-style sequence parallelism (its tensor_sequence axis is another layout)");
    if (p.tp_overlap) w.refuse("tp_overlap", "MaxText has no setting for it (XLA schedules the tensor-parallel collectives)");
    if (p.ep_overlap) w.refuse("ep_overlap", "MaxText has no setting that overlaps the expert all-to-all this way");
    if (p.moe_dispatcher == "deepep" && s.model.moe) w.refuse("moe_dispatcher", "MaxText has no DeepEP dispatcher");
    if (p.fp8_dispatch) w.refuse("fp8_dispatch", "MaxText has no DeepEP dispatcher to send fp8 tokens");
    if (p.mtp_depth > 0) w.refuse("mtp_depth", "this emitter writes no multi-token prediction settings for MaxText");
    w.note("MaxText lays each ICI axis on the torus itself (mesh_axes); Ridgeline's placement is not written");
}

}  // namespace emit_detail

namespace {

std::vector<std::string> training_header(const TrainingScenario& s, const TrainingReport& r) {
    return {"model " + s.model.name + " on " + text(s.cluster.chips()) + " x " + s.chip.name + " (" + s.cluster.name + "), stack " + s.stack.name +
                ", sequence " + text(whole(s.seq_len)) + ", global batch " + text(whole(s.global_batch_seqs)) + " sequences",
            "predicted: step " + report::seconds(r.step_time_s) + ", MFU " + report::fixed(100.0 * r.mfu, 1) + "%, " +
                report::si(r.tokens_per_s) + " tokens/s" + ", " + report::si(r.memory.total_bytes(), "B") + " per chip of " +
                report::si(r.hbm_bytes, "B") + (r.fits ? "" : " (does not fit)")};
}

}  // namespace

std::string emit_training(const EmitterSpec& spec, const TrainingScenario& scenario, const TrainingReport& report) {
    if (spec.job != EmitJob::training)
        throw InputError("--emit", "", spec.name + " writes serving launch arguments; training plans take " + emit_framework_names(EmitJob::training));
    EmitWriter w(spec);
    if (spec.name == "megatron") emit_detail::megatron(w, scenario);
    else if (spec.name == "maxtext") emit_detail::maxtext(w, scenario);
    else if (spec.name == "torchtitan") emit_detail::torchtitan(w, scenario);
    else throw InputError("--emit", "", "no training emitter for " + spec.name + " (known: " + emit_framework_names(EmitJob::training) + ")");
    return w.render(training_header(scenario, report));
}

}  // namespace ridgeline
