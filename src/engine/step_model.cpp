#include "engine/step_model.hpp"

#include <algorithm>

namespace ridgeline {

namespace {

std::size_t index(StepPart part) { return static_cast<std::size_t>(part); }

double exposed(double comm_s, double cover_s, bool overlapped) {
    return overlapped ? std::max(0.0, comm_s - cover_s) : comm_s;
}

// The part of comm_s that runs under cover_s (its kernels hold SMs the compute beneath them lacks).
double hidden(double comm_s, double cover_s, bool overlapped) { return overlapped ? std::min(comm_s, cover_s) : 0.0; }

// A rank's once-per-step data-parallel traffic (comm_s in all) under its pass of one micro-batch
// (pass_s). Interleaved over v model chunks, each chunk's share is reduced as soon as that chunk's
// last backward is done, and those come p chunk-steps apart (Megatron-Core launches each chunk's
// grad sync so; the weight gathers mirror it in the forward): chunk c's traffic ends by
// (c + 1) comm_s / v - (c p + 1) pass_s / v after the pass, worst at c = 0 or c = v - 1.
double chunked_exposed(double comm_s, double pass_s, double chunks, double stages, bool overlapped) {
    if (!overlapped) return comm_s;
    const double first = (comm_s - pass_s) / chunks;
    const double last = comm_s - pass_s / chunks - (chunks - 1.0) * stages * pass_s / chunks;
    return std::max({0.0, first, last});
}

// Micro-batches whose activations a pipeline rank holds at once.
double in_flight_microbatches(const LayoutCosts& l, const StepKnobs& k) {
    const double pp = l.pipeline_size;
    switch (k.schedule) {
        case PipelineSchedule::gpipe: return k.microbatches;
        case PipelineSchedule::one_f_one_b: return std::min(k.microbatches, pp);
        case PipelineSchedule::interleaved: return std::min(k.microbatches, pp) * (1.0 + (pp - 1.0) / (pp * k.virtual_stages));
        case PipelineSchedule::zero_bubble: return std::min(k.microbatches, pp);
        case PipelineSchedule::dualpipe: return std::min(k.microbatches, pp + 1.0);
    }
    return k.microbatches;
}

double optimizer_shards(const LayoutCosts& l, const StepKnobs& k) { return k.zero_stage >= 1 ? l.optimizer_shard_size : 1.0; }

double sum_of(const StepParts& parts) {
    double step_s = 0;
    for (const double part_s : parts) step_s += part_s;
    return step_s;
}

}  // namespace

double forward_compute_s(const LayoutCosts& l) { return l.matmul_fwd_s + l.attention_fwd_s + l.elementwise_fwd_s + l.launches_fwd_s; }

double backward_compute_s(const LayoutCosts& l) { return l.matmul_bwd_s + l.attention_bwd_s + l.elementwise_bwd_s + l.launches_bwd_s; }

namespace {

double bytes_of(const LayoutCosts& l, SavedTensors tensors) {
    double bytes = 0;
    for (std::size_t bit = 0; bit < kSavedTensorCount; ++bit)
        if ((tensors >> bit) & 1u) bytes += l.saved_bytes_per_layer[bit];
    return bytes;
}

SavedTensors kept(const LayoutCosts& l, const StepKnobs& k) { return saved_tensors(k.recompute, AttentionKernel::fused, l.latent_attention); }
SavedTensors offloaded(const LayoutCosts& l, const StepKnobs& k) { return k.offload_activations ? offloaded_tensors(kept(l, k)) : 0u; }

}  // namespace

double activation_bytes_per_layer(const LayoutCosts& l, const StepKnobs& k) { return bytes_of(l, kept(l, k) & ~offloaded(l, k)); }

double offloaded_bytes_per_layer(const LayoutCosts& l, const StepKnobs& k) { return bytes_of(l, offloaded(l, k)); }

double recompute_s(const LayoutCosts& l, RecomputeModules recompute) {
    using M = RecomputeModule;
    if (recomputes(recompute, M::layer)) return forward_compute_s(l);
    double s = 0;
    if (recomputes(recompute, M::core_attention) || recomputes(recompute, M::attention_output)) s += l.attention_fwd_s;
    if (recomputes(recompute, M::norms)) s += l.norm_fwd_s;
    if (recomputes(recompute, M::activation)) s += l.activation_fwd_s;
    if (recomputes(recompute, M::mlp_up)) s += l.mlp_up_fwd_s;
    if (recomputes(recompute, M::mla_up_projection)) s += l.mla_up_fwd_s;
    if (recomputes(recompute, M::attention_projection)) s += l.out_projection_fwd_s;
    return s;
}

MemoryBreakdown estimate_memory(const LayoutCosts& l, const StepKnobs& k) {
    MemoryBreakdown m;
    const double gradient_shards = k.zero_stage >= 2 ? l.optimizer_shard_size : 1.0;
    const TrainingPrecision& p = l.precision;
    // DualPipe runs the pipeline from both ends: each rank holds two stages' parameters and their state.
    const double params = l.local_params * (k.schedule == PipelineSchedule::dualpipe ? 2.0 : 1.0);
    m.parameters_bytes = params * p.param_bytes;
    m.gradients_bytes = params * p.grad_bytes / gradient_shards;
    m.optimizer_bytes = k.offload_optimizer ? 0.0 : params * (p.master_bytes + p.optimizer_bytes) / optimizer_shards(l, k);
    const double held_layers = l.layers_per_stage * in_flight_microbatches(l, k);
    // Offloaded tensors pass through the chip: one layer's on their way out, the next layer's on their way back.
    const double offloaded_per_layer = offloaded_bytes_per_layer(l, k);
    m.activations_bytes = activation_bytes_per_layer(l, k) * held_layers + 2.0 * offloaded_per_layer;
    m.host_activations_bytes = offloaded_per_layer * held_layers;
    m.buffers_bytes = l.logits_buffer_bytes + l.gathered_weight_bytes;
    return m;
}

StagePace pipeline_pace(const LayoutCosts& l, const StepKnobs& k) {
    if (l.other_stage_layers <= l.last_stage_layers) return {l.last_stage_layers, l.logits_s};  // even splits: no time to compare
    const double layer_s = forward_compute_s(l) + backward_compute_s(l) + recompute_s(l, k.recompute);
    if (l.other_stage_layers * layer_s > l.last_stage_layers * layer_s + l.logits_s) return {l.other_stage_layers, 0.0};
    return {l.last_stage_layers, l.logits_s};
}

namespace {

// The parts no overlap setting changes, written here alone so that the floor and the step agree to the bit.
void fill_overlap_free_parts(const LayoutCosts& l, const StepKnobs& k, StepParts& parts) {
    const StagePace pace = pipeline_pace(l, k);
    const double m = k.microbatches, layers = pace.layers;
    parts[index(StepPart::matmuls)] = m * layers * (l.matmul_fwd_s + l.matmul_bwd_s) + m * pace.logits_s;
    parts[index(StepPart::attention)] = m * layers * (l.attention_fwd_s + l.attention_bwd_s);
    parts[index(StepPart::elementwise)] = m * layers * (l.elementwise_fwd_s + l.elementwise_bwd_s);
    parts[index(StepPart::launches)] = m * layers * (l.launches_fwd_s + l.launches_bwd_s);
    parts[index(StepPart::recompute)] = m * layers * recompute_s(l, k.recompute);
    const double optimizer_params = l.local_params / optimizer_shards(l, k);
    parts[index(StepPart::optimizer)] = k.offload_optimizer ? optimizer_params * l.precision.offload_traffic_bytes_per_param() / l.host_link_Bps
                                                            : optimizer_params * l.precision.update_traffic_bytes_per_param() / l.hbm_Bps;
    parts[index(StepPart::framework)] = l.step_overhead_s;
}

}  // namespace

double step_time_floor_s(const LayoutCosts& l, const StepKnobs& k) {
    StepParts parts{};
    fill_overlap_free_parts(l, k, parts);
    return sum_of(parts);
}

double estimate_step_time(const LayoutCosts& l, const StepKnobs& k, StepParts& parts) {
    const double compute_fwd = forward_compute_s(l);
    const double matmul_bwd = l.matmul_bwd_s, attention_bwd = l.attention_bwd_s;
    const double compute_bwd = backward_compute_s(l);
    const double recompute = recompute_s(l, k.recompute);

    // Exposed communication per layer and micro-batch: tensor-parallel collectives sit on the
    // critical path unless overlapped with the GEMMs they feed; ring attention hides under the
    // attention core; weight gathers are prefetched under the layer's compute.
    // Overlapped, the GEMMs beside the collectives run on the SMs the collectives leave them.
    const double tp_exposed = exposed(l.tensor_comm_fwd_s, l.matmul_fwd_s, k.overlap_tensor_parallel) +
                              exposed(l.tensor_comm_bwd_s, matmul_bwd, k.overlap_tensor_parallel) +
                              (k.overlap_tensor_parallel ? l.tp_overlap_sm_s : 0.0);
    const double cp_exposed = exposed(l.context_comm_fwd_s, l.attention_fwd_s, true) + exposed(l.context_comm_bwd_s, attention_bwd, true);
    // Hidden, the gathers' kernels still hold SMs: the compute under them runs on the rest.
    const bool fsdp_overlap = k.overlap_data_parallel && !l.weight_comm_blocks;
    const double fsdp_hidden = hidden(l.weight_comm_fwd_s, compute_fwd, fsdp_overlap) + hidden(l.weight_comm_bwd_s, compute_bwd, fsdp_overlap);
    const double fsdp_fwd = exposed(l.weight_comm_fwd_s, compute_fwd, fsdp_overlap);
    const double fsdp_bwd = exposed(l.weight_comm_bwd_s, compute_bwd, fsdp_overlap);
    const double fsdp_exposed = fsdp_fwd + fsdp_bwd + l.sharded_comm_sm_margin * fsdp_hidden;

    // DualPipe pairs a forward and a backward chunk so that each one's AllToAll runs under the other's compute.
    const bool expert_overlap = k.overlap_expert_parallel || k.schedule == PipelineSchedule::dualpipe;
    // Hidden, its kernels still hold SMs: the compute under it runs on the rest, taking share x its time longer.
    const double ep_hidden = hidden(l.expert_comm_s, compute_fwd + compute_bwd, expert_overlap);
    const double ep_exposed = exposed(l.expert_comm_s, compute_fwd + compute_bwd, expert_overlap) + l.expert_comm_sm_share * ep_hidden;

    // Offloaded activations cross the host link out during the layer's forward pass and back during
    // its backward, each under the pass as long as it already is (the weight gathers run on other links).
    const double offload_s = offloaded_bytes_per_layer(l, k) / l.host_link_Bps;
    const double offload_fwd = exposed(offload_s, compute_fwd + fsdp_fwd, true);
    const double offload_bwd = exposed(offload_s, compute_bwd + recompute + fsdp_bwd, true);
    const double offload_exposed = offload_fwd + offload_bwd;

    const StagePace pace = pipeline_pace(l, k);
    const double layers = pace.layers;
    const double stage_fwd = layers * compute_fwd;
    const double stage_bwd = layers * (compute_bwd + recompute);
    const double stage_comm = layers * (tp_exposed + cp_exposed + ep_exposed + fsdp_exposed + offload_exposed);
    const double per_microbatch = stage_fwd + stage_bwd + stage_comm + pace.logits_s;
    // Idle time of the pipeline, in the terms of DeepSeek-V3's Table 2: F + B per micro-batch, W the
    // weight-gradient GEMMs (half the backward GEMMs) that zero-bubble schedules move into the bubble.
    const double pp = l.pipeline_size, weight_grads = layers * matmul_bwd / 2.0;
    double bubble = (pp - 1.0) * per_microbatch;
    if (k.schedule == PipelineSchedule::interleaved) bubble /= k.virtual_stages;
    if (k.schedule == PipelineSchedule::zero_bubble) bubble = (pp - 1.0) * std::max(0.0, per_microbatch - 2.0 * weight_grads);
    if (k.schedule == PipelineSchedule::dualpipe)
        bubble = std::max(0.0, pp / 2.0 - 1.0) * std::max(0.0, per_microbatch + layers * (compute_bwd + recompute) - 3.0 * weight_grads);

    // Once per step: gradient reduction under the last backward pass, weight gathers under the next forward.
    const double chunks = k.schedule == PipelineSchedule::interleaved ? k.virtual_stages : 1.0;
    // The passes they hide under last as long as offloaded activations hold them.
    const double step_comm = chunked_exposed(layers * l.gradient_comm_s, stage_bwd + layers * offload_bwd, chunks, pp, k.overlap_data_parallel) +
                             chunked_exposed(layers * l.gather_comm_s, stage_fwd + layers * offload_fwd, chunks, pp, k.overlap_data_parallel);

    const double m = k.microbatches;
    fill_overlap_free_parts(l, k, parts);
    parts[index(StepPart::tensor_comm)] = m * layers * tp_exposed;
    parts[index(StepPart::context_comm)] = m * layers * cp_exposed;
    parts[index(StepPart::expert_comm)] = m * layers * ep_exposed;
    parts[index(StepPart::weight_gathers)] = m * layers * fsdp_exposed;
    parts[index(StepPart::activation_offload)] = m * layers * offload_exposed;
    parts[index(StepPart::bubble)] = bubble;
    // Interleaved, a micro-batch crosses a stage boundary once per virtual stage (Narayanan et al.
    // 2021, Sec. 2.2.2); stacks that overlap those sends hide each under a virtual stage's compute.
    const bool interleaved = k.schedule == PipelineSchedule::interleaved;
    const double crossings = interleaved ? k.virtual_stages : 1.0;
    const double send_s = exposed(l.pipeline_send_s, per_microbatch / crossings, interleaved && l.interleaved_send_overlap);
    parts[index(StepPart::pipeline_sends)] = m * crossings * send_s;
    parts[index(StepPart::gradient_sync)] = step_comm;
    parts[index(StepPart::stragglers)] = 0.0;  // a search reuses `parts`: the last plan's must not count
    const double step_s = sum_of(parts);
    parts[index(StepPart::stragglers)] = step_s * l.straggler_fraction;
    return step_s + parts[index(StepPart::stragglers)];
}

}  // namespace ridgeline
