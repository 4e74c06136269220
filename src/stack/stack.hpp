#pragma once
// A software stack as data (stacks/*.json): what a framework runs on a chip — which attention
// kernel, whether the memory-bound kernels are fused, how the loss is computed — and the few
// overheads of its own that no kernel measurement shows, fitted on published runs with their
// origin stored. Kernel efficiencies are the chip's (hardware files, "kernels"), never the stack's.
#include <map>
#include <string>
#include <vector>

#include "spec/plan.hpp"  // known_moe_dispatcher

namespace ridgeline {

// The overheads of a stack's own that no kernel measurement shows: a stack file's "fitted" block,
// fitted on published runs (validation/stack_fit.hpp).
struct StackParams {
    double per_step_overhead_s = 0;      // once per optimizer step (host work, synchronisation)
    double layer_overhead_fraction = 0;  // of each layer's compute (launch gaps, framework work)
    // How much one rank's step time varies from step to step (coefficient of variation); every
    // rank waits for the slowest (engine/stragglers.hpp).
    double rank_time_cv = 0;
    // Where the stack's ZeRO-3 / FSDP runs show it: the share of the modelled collective rate its
    // per-layer parameter gathers and gradient reduce-scatters reach (1 where no run says less).
    double sharded_comm_efficiency = 1;
};

struct Stack {
    std::string name;
    std::string family;  // stacks sharing a code base (NeMo and Megatron-LM run Megatron-Core): the name where none is given
    std::string description;
    bool trains = true, serves = true;  // the jobs it runs: an inference engine serves only
    // Attention kernel families as the chips' kernels.attention name them, in the stack's order of
    // preference: a chip runs the first it has measurements of (Transformer Engine takes cuDNN's
    // fused attention where it has it, FlashAttention-2 elsewhere).
    std::vector<std::string> attention{"cudnn"};
    // Eager frameworks run each norm, activation and RoPE as its own kernel, at the rates measured
    // for eager PyTorch; fused ones (Transformer Engine, torch.compile, XLA) move the same bytes
    // at the rate of a plain copy.
    bool fused_elementwise = true;
    bool fp32_cross_entropy = false;  // the loss upcasts the logits to fp32 (eager cross-entropy)
    bool fp8_output_layer = false;    // under fp8 the output layer's GEMMs run in fp8 too (none of the shipped stacks)
    StackParams fitted;
    std::string fitted_origin;           // where the fitted parameters come from
    // "own" records, or none: the pooled fit of its "family"'s other stacks, or of all stacks ("pooled").
    std::string fitted_from = "own";
    // Of a fit from its own records, the parameters they could not show (no sharded runs, no scaling
    // series), taken from its "family"'s fit or the "pooled" fit of all stacks.
    std::map<std::string, std::string> fitted_borrowed;
    // MoE token dispatchers the stack offers ("alltoall": NCCL AllToAll; "deepep": DeepEP's
    // node-deduplicated kernels), and whether it can hide the expert AllToAll under another
    // micro-batch's compute (Megatron-Core's EP overlap; DualPipe does so by construction).
    std::vector<std::string> moe_dispatchers{"alltoall"};
    bool expert_comm_overlap = false;
    // SMs the expert AllToAll's kernels hold while they run under compute: that compute runs on the rest.
    double expert_comm_sms = 0;
    // SMs a GEMM leaves to the tensor-parallel collective overlapped with it (--tp-overlap): the
    // row-parallel GEMMs forward, the column-parallel ones backward.
    double tp_comm_sms_forward = 0, tp_comm_sms_backward = 0;
    // SMs the FSDP / ZeRO-3 gathers and reduce-scatters hold while they run under compute.
    double sharded_comm_sms = 0;
    // DeepSpeed's ZeRO-3 of 2021 (v0.3.12-v0.5.10): each parameter gathered by itself after a device-wide
    // synchronisation, so none of its sharded collectives (the reduce-scatters in flight included)
    // runs under compute; and each through torch.distributed's list form, which copies one piece
    // per rank into or out of a flat buffer.
    bool sharded_comm_blocks = false;
    bool sharded_copies_per_rank = false;
    // Pipeline sends of activations every tensor rank holds whole go as 1/tp slices, all-gathered
    // over the tensor ranks after (Megatron-LM's scatter/gather optimisation).
    bool pipeline_scatter_gather = false;
    // Interleaved pipelines' sends overlap the next virtual stage's compute (Megatron-Core's overlap_p2p_comm).
    bool interleaved_send_overlap = false;
    bool fp32_gradient_reduction = false;  // bf16 (and fp8) runs reduce their gradients in fp32
};

// The stack a chip runs when none is named: Megatron-Core for training and vLLM for serving on
// GPUs, MaxText on TPUs.
[[nodiscard]] const char* default_stack_name(bool tpu, bool serving = false);

}  // namespace ridgeline
