#include "emit/emit.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "emit/emit_writer.hpp"
#include "emit/frameworks.hpp"
#include "report/table.hpp"
#include "spec/serving_knobs.hpp"

namespace ridgeline {

namespace {

using Int = std::int64_t;

Int whole(double value) { return static_cast<Int>(std::llround(value)); }
std::string text(Int value) { return std::to_string(value); }

// The deployment's dtypes a launch file carries (kServingKnobs' emitted rows).
void choose_dtypes(EmitWriter& w, const Plan& p) {
    for (const ServingKnob& knob : kServingKnobs)
        if (knob.emitted) w.choose(knob.key, std::string(dtype_name(*serving_dtype(p, knob))), knob.key);
}

// vLLM launch arguments (vllm serve MODEL ...).
void vllm(EmitWriter& w, const ServingScenario& s) {
    const Plan& p = s.plan;
    w.set("tp", p.tp);
    w.set("pp", p.pp);
    w.set("dp", p.dp);
    if (p.ep > 1) {
        if (p.ep != p.dp)
            w.refuse("ep", "vLLM spreads the experts over every tensor and data-parallel rank (--enable-expert-parallel); ep " + text(p.ep) +
                               " of " + text(p.dp) + " replicas is not that (give --ep " + text(p.dp) + " or --dp " + text(p.ep) + ")");
        w.set_switch("expert_parallel", true);
    }
    const Int per_replica = whole(s.batch_per_replica());
    w.set("max_batch", per_replica);
    // Ridgeline prefills one prompt at a time (its memory holds one prompt's working set): a step
    // takes a whole prompt, or every sequence's decode token.
    w.set("max_tokens", std::max(whole(s.input_len), per_replica));
    w.set("max_model_len", whole(s.input_len + s.output_len));
    choose_dtypes(w, p);
    if (s.speculative.draft_tokens > 0)
        w.refuse("draft_tokens", "this emitter writes no speculative-decoding settings for vLLM (its --speculative-config)");
    w.note("--max-num-batched-tokens holds one whole prompt per step, as Ridgeline prices prefill");
}

// TensorRT-LLM launch arguments (trtllm-serve MODEL ...): one engine is one replica.
void trtllm(EmitWriter& w, const ServingScenario& s) {
    const Plan& p = s.plan;
    w.set("tp", p.tp);
    w.set("pp", p.pp);
    if (p.ep > 1)
        w.refuse("ep", "TensorRT-LLM spreads experts inside one engine's tensor-parallel group (moe_tp x moe_ep = tp_size, attention over replicas "
                       "only with --enable_attention_dp); Ridgeline's ep over " + text(p.dp) + " replicas is not written for it");
    if (p.dp > 1) w.note("run " + text(p.dp) + " such servers behind a load balancer: one trtllm-serve engine is one of the plan's replicas");
    const Int per_replica = whole(s.batch_per_replica());
    w.set("max_batch", per_replica);
    w.set("max_tokens", std::max(whole(s.input_len), per_replica));  // one whole prompt per step, as Ridgeline prices prefill
    w.set("max_seq_len", whole(s.input_len + s.output_len));
    choose_dtypes(w, p);
    if (p.weights != Dtype::bf16)
        w.note("serve a checkpoint quantized to " + std::string(dtype_name(p.weights)) + " (TensorRT-LLM reads the weights' precision from the checkpoint)");
    if (s.speculative.draft_tokens > 0)
        w.refuse("draft_tokens", "this emitter writes no speculative-decoding settings for TensorRT-LLM (its speculative_config)");
}

// SGLang launch arguments (python -m sglang.launch_server ...). Experts over the replicas run as
// SGLang's data-parallel attention: one server over every GPU, attention split into dp groups of
// tp, experts over all of them; its per-server limits are then divided by dp.
void sglang(EmitWriter& w, const ServingScenario& s) {
    const Plan& p = s.plan;
    const bool dp_attention = p.ep > 1;
    if (dp_attention && p.ep != p.dp)
        w.refuse("ep", "SGLang spreads the experts over every rank of its data-parallel attention (--enable-dp-attention --ep-size); ep " +
                           text(p.ep) + " of " + text(p.dp) + " replicas is not that (give --ep " + text(p.dp) + " or --dp " + text(p.ep) + ")");
    const Int server_ranks = dp_attention ? p.tp * p.dp : p.tp;
    const Int servers_share = dp_attention ? p.dp : 1;  // replicas one server's limits count
    w.set("tp", server_ranks);
    w.set("pp", p.pp);
    w.set("dp", p.dp);
    if (dp_attention) {
        w.set_switch("dp_attention", true);
        w.set("ep", server_ranks);
    }
    const Int per_replica = whole(s.batch_per_replica());
    w.set("max_batch", per_replica * servers_share);
    w.set("max_tokens", std::max(whole(s.input_len), per_replica) * servers_share);  // one whole prompt per step, as Ridgeline prices prefill
    w.set("context_length", whole(s.input_len + s.output_len));
    choose_dtypes(w, p);
    if (s.speculative.draft_tokens > 0)
        w.refuse("draft_tokens", "this emitter writes no speculative-decoding settings for SGLang (its --speculative-algorithm)");
    if (p.dp > 1 && !dp_attention) w.note("--dp-size " + text(p.dp) + " runs that many copies of the --tp-size group behind SGLang's own router");
}

std::vector<std::string> serving_header(const ServingScenario& s, const ServingReport& r) {
    return {"model " + s.model.name + " on " + text(s.cluster.chips()) + " x " + s.chip.name + " (" + s.cluster.name + "), stack " + s.stack.name +
                ", batch " + text(whole(s.batch_seqs)) + " sequences, " + text(whole(s.input_len)) + " tokens in, " + text(whole(s.output_len)) +
                " out",
            "predicted: TTFT " + report::seconds(r.prefill.time_s) + ", TPOT " + report::seconds(r.tpot_s()) + ", " +
                report::si(r.output_tokens_per_s) + " output tokens/s (" + report::si(r.output_tokens_per_s_per_chip) + " per chip), " +
                report::si(r.memory.total_bytes(), "B") + " per chip of " + report::si(r.hbm_bytes, "B") + (r.fits ? "" : " (does not fit)")};
}

}  // namespace

std::string emit_serving(const EmitterSpec& spec, const ServingScenario& scenario, const ServingReport& report) {
    if (spec.job != EmitJob::serving)
        throw InputError("--emit", "", spec.name + " writes training configurations; serving plans take " + emit_framework_names(EmitJob::serving));
    EmitWriter w(spec);
    if (spec.name == "vllm") vllm(w, scenario);
    else if (spec.name == "trtllm") trtllm(w, scenario);
    else if (spec.name == "sglang") sglang(w, scenario);
    else throw InputError("--emit", "", "no serving emitter for " + spec.name + " (known: " + emit_framework_names(EmitJob::serving) + ")");
    return w.render(serving_header(scenario, report));
}

}  // namespace ridgeline
