#pragma once
// The training step in two stages. `LayoutCosts` holds what a plan's layout fixes — its axes,
// their placement, the strategy and the micro-batch size: per-layer times of one micro-batch,
// communication, weights and activations. `StepKnobs` are the rest of a plan (micro-batches per
// step, pipeline schedule, recomputation, ZeRO stage, offload, overlap), and the two functions
// below turn a layout and knobs into memory and time with arithmetic alone: no allocation, no
// strings, so that the parallelism search can afford millions of them.
#include <array>
#include <cstddef>

#include "model/training_state.hpp"
#include "model/transformer_math.hpp"
#include "spec/pipeline_schedule.hpp"

namespace ridgeline {

struct LayoutCosts {
    // One average layer on the slowest stage, one micro-batch, forward unless named.
    double matmul_fwd_s = 0, attention_fwd_s = 0, elementwise_fwd_s = 0, launches_fwd_s = 0;
    double matmul_bwd_s = 0, attention_bwd_s = 0, elementwise_bwd_s = 0, launches_bwd_s = 0;
    double tensor_comm_fwd_s = 0, tensor_comm_bwd_s = 0;
    // What the GEMMs a tensor-parallel overlap runs its collectives under lose to the SMs those
    // collectives hold (forward and backward).
    double tp_overlap_sm_s = 0;
    double context_comm_fwd_s = 0, context_comm_bwd_s = 0;
    double expert_comm_s = 0;  // forward and backward
    double expert_comm_sm_share = 0;  // of the chip's SMs the overlapped expert AllToAll holds
    double sharded_comm_sm_margin = 0;  // a GEMM's extra time per second of FSDP traffic hidden under it
    double weight_comm_fwd_s = 0, weight_comm_bwd_s = 0;
    bool weight_comm_blocks = false;  // the stack's sharded collectives never run under compute
    double gradient_comm_s = 0, gather_comm_s = 0;  // once per step, per layer
    double logits_s = 0;                             // output layer, forward and backward
    double pipeline_send_s = 0;                      // per micro-batch, forward and back
    bool interleaved_send_overlap = false;           // the stack hides interleaved pipelines' sends under compute
    double step_overhead_s = 0;                      // the software stack's, once per step
    double straggler_fraction = 0;                   // of the rest of the step: waiting for the slowest rank
    // Forward times of what a recomputation policy may run again (beside the attention core).
    double norm_fwd_s = 0, activation_fwd_s = 0, mlp_up_fwd_s = 0, mla_up_fwd_s = 0, out_projection_fwd_s = 0;
    double layers_per_stage = 1;  // the largest stage's, with the MTP modules on the last: what memory holds
    // The last stage's layers (with the MTP modules; it also runs the output layer) and the largest
    // other stage's (0 with one stage): which of them sets the pipeline's pace (pipeline_pace).
    double last_stage_layers = 1, other_stage_layers = 0;
    double pipeline_size = 1;
    // Memory.
    double local_params = 0;          // elements: the stage's layers and embeddings
    double layer_weight_elements = 0;  // one average layer, local
    double fsdp_size = 1;
    double optimizer_shard_size = 1;   // data-parallel axes (not fsdp) that ZeRO-1/2 shard over
    std::array<double, kSavedTensorCount> saved_bytes_per_layer{};  // by SavedTensor bit, one micro-batch
    bool latent_attention = false;  // MLA
    double logits_buffer_bytes = 0;
    double gathered_weight_bytes = 0;  // fsdp-gathered layers held at once
    TrainingPrecision precision = TrainingPrecision::fp32_gradient_accumulation();
    double hbm_bytes = 0;
    // Rates.
    double hbm_Bps = 1;
    double host_link_Bps = 1;
    // Throughput accounting.
    double tokens_per_step = 0;
    double chips = 1;
    double peak_flops = 1;
    double model_flops_per_token = 0;
};

struct StepKnobs {
    double microbatches = 1;
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    double virtual_stages = 1;
    RecomputeModules recompute = 0;
    bool offload_activations = false;  // what the policy keeps, but each layer's input, waits in host memory
    int zero_stage = 0;
    bool offload_optimizer = false;
    bool overlap_data_parallel = true;
    bool overlap_tensor_parallel = false;
    bool overlap_expert_parallel = false;  // the AllToAll of one micro-batch under another's compute
};

// The stage that sets the pipeline's pace: the last, with the output layer, or the largest other
// (Megatron-Core's uneven splits leave the last stage a layer short for the output layer).
struct StagePace {
    double layers = 1;
    double logits_s = 0;  // the output layer's time, when the pacing stage runs it
};
[[nodiscard]] StagePace pipeline_pace(const LayoutCosts& l, const StepKnobs& k);

// The parts of a step, in the order reports list them; they sum to the step time.
enum class StepPart {
    matmuls, attention, elementwise, launches, recompute, tensor_comm, context_comm, expert_comm,
    weight_gathers, activation_offload, bubble, pipeline_sends, gradient_sync, optimizer, framework, stragglers
};
inline constexpr std::size_t kStepParts = 16;
using StepParts = std::array<double, kStepParts>;

struct MemoryBreakdown {
    double parameters_bytes = 0;
    double gradients_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0;
    double buffers_bytes = 0;
    double host_activations_bytes = 0;  // offloaded: in host memory, not counted in the chip's total
    [[nodiscard]] double total_bytes() const {
        return parameters_bytes + gradients_bytes + optimizer_bytes + activations_bytes + buffers_bytes;
    }
};

// Backward over forward: a matmul's backward is two GEMMs of its size (input and weight
// gradients); fused attention's recomputes the probabilities as well (FlashAttention-2, Dao 2023).
inline constexpr double kMatmulBackwardRatio = 2.0;
inline constexpr double kAttentionBackwardRatio = 2.5;
// One average layer's compute for one micro-batch.
[[nodiscard]] double forward_compute_s(const LayoutCosts& layout);
[[nodiscard]] double backward_compute_s(const LayoutCosts& layout);

// Activations one layer keeps for one micro-batch on the chip and, offloaded, in host memory; and
// the forward work it repeats, under a policy.
[[nodiscard]] double activation_bytes_per_layer(const LayoutCosts& layout, const StepKnobs& knobs);
[[nodiscard]] double offloaded_bytes_per_layer(const LayoutCosts& layout, const StepKnobs& knobs);
[[nodiscard]] double recompute_s(const LayoutCosts& layout, RecomputeModules recompute);

[[nodiscard]] MemoryBreakdown estimate_memory(const LayoutCosts& layout, const StepKnobs& knobs);

// The step time; `parts` receives its split.
double estimate_step_time(const LayoutCosts& layout, const StepKnobs& knobs, StepParts& parts);

// A floor under estimate_step_time for every overlap setting of these knobs: the parts no overlap
// changes (compute, recomputation, optimizer, framework), summed in the same order with the others
// at zero. A rounded sum never falls when a term grows, so no setting's step is below it: a search
// skips the overlaps of knobs whose floor could not rank.
[[nodiscard]] double step_time_floor_s(const LayoutCosts& layout, const StepKnobs& knobs);

}  // namespace ridgeline
