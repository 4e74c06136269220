#pragma once
// From a strategy's partition specs to the work of one transformer layer on one device: the
// local matmuls and the collectives each needs, forward and backward, by the four cases of a
// sharded matmul (contracting dim sharded on one side -> AllGather it; on both -> partial sums,
// then ReduceScatter or AllReduce; the same axis on two non-contracting dims -> AllGather one)
// and their transposes in the backward pass, plus the gradient reductions over the axes that
// split the batch but not the weights.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "collective/collective.hpp"
#include "model/model_spec.hpp"
#include "model/transformer_math.hpp"
#include "sharding/strategy.hpp"

namespace ridgeline {

using AxisSizes = std::map<std::string, std::int64_t>;

// Once per step: gradient reductions after the last backward pass, then the optimizer's
// gather of the updated weights where ZeRO shards them.
enum class CommPhase { forward, backward, gradient, optimizer };
// What a collective moves, which decides what compute can hide it: layer activations (tensor
// parallelism), keys and values between context ranks, routed tokens, or weights and gradients.
enum class CommRole { activations, context, experts, weights };

struct DerivedCollective {
    std::string what;  // e.g. "mlp_in: all-gather weight over fsdp"
    CollectiveKind kind = CollectiveKind::all_gather;
    AxisList axes;
    double bytes = 0;  // the logical array, as collective_cost takes it
    CommPhase phase = CommPhase::forward;
    CommRole role = CommRole::activations;
};

struct DerivedMatmul {
    std::string name;
    double rows = 0, contract = 0, cols = 0;  // the local GEMM of one instance
    double instances = 1;                       // local experts, for expert layers
    [[nodiscard]] double flops() const { return 2.0 * rows * contract * cols * instances; }
    double weight_elements = 0;                 // local weight elements read (all instances)
    bool routed = false;                        // its tokens were permuted to their experts and back
    // Tensor-parallel collectives beside it: its partial output is reduced (row-parallel, forward)
    // or its input gradient is (column-parallel, backward). Overlapping stacks split the GEMM to
    // run the collective under it.
    bool output_reduced = false;
    bool input_gradient_reduced = false;
};

// The fused attention core on this device: what it computes and what it keeps in the KV cache.
struct AttentionCore {
    double flops = 0;                  // forward QK^T and AV
    double queries = 0;                // query tokens
    double keys = 0;                   // keys per query, averaged over queries and layers (windows counted)
    double heads = 0;                  // query heads
    double qk_head = 0, v_head = 0;    // head widths of queries/keys and of values
    double kv_elements_per_token = 0;  // cached per token: K and V of the local KV heads (MLA: the whole latent)
    // HBM traffic: queries and outputs, and the KV cache written (prefill) or read (a decode step,
    // each query reading its `keys` cached tokens).
    [[nodiscard]] double hbm_bytes(bool decode, double activation_bytes, double kv_bytes) const {
        const double q_and_out = activation_bytes * queries * heads * (qk_head + v_head);
        if (decode) return q_and_out + queries * keys * kv_elements_per_token * kv_bytes;
        return q_and_out + queries * kv_elements_per_token * (kv_bytes + activation_bytes);
    }
};

// Which memory-bound kernel an op is, so that a chip's measured rates can price it. A gated MLP's
// activation (SwiGLU, GeGLU) is its own kind; a plain MLP's (GELU) is one kernel of a copy's shape.
enum class ElementwiseKind { norm, residual_add, gated_activation, plain_activation, rope, copy };

// A memory-bound op of the forward pass: elements it reads and writes, at the activations' width,
// and the kernels it launches apart from the GEMMs (0 for an epilogue the GEMM runs itself).
struct ElementwiseOp {
    std::string name;
    double elements = 0;
    ElementwiseKind kind = ElementwiseKind::copy;
    double launches = 1;
};

struct LayerWork {
    std::vector<DerivedMatmul> matmuls;         // forward matmuls; backward does each twice
    std::vector<ElementwiseOp> elementwise;     // norms, residual adds, GEMM epilogues, token permutes
    [[nodiscard]] double elementwise_elements() const {
        double total = 0;
        for (const ElementwiseOp& op : elementwise) total += op.elements;
        return total;
    }
    std::vector<DerivedCollective> collectives;
    AttentionCore attention;
    double local_tokens = 0;                     // tokens of the micro-batch on this device
    double weight_elements = 0;                  // weights of one layer held by this device
    // Elements of the micro-batch's tensors the backward pass may need, by SavedTensor bit: the
    // inputs and outputs of the ops above on this device (fp32 statistics count twice). A
    // checkpoint policy keeps some and recomputes the rest.
    std::array<double, kSavedTensorCount> saved_elements{};
};

// One pass through the layer: a training micro-batch or a prefill (causal attention over each
// sequence's own tokens), or a decode step (seq_len 1, each query attending to context_len keys).
struct MicroBatch {
    double micro_batch_seqs = 1;  // per data-parallel replica (one replica = tensor x pipeline x context chips)
    double seq_len = 1;
    double activation_bytes = 2;  // per element moved by activation collectives
    double weight_bytes = 2;      // per element moved by weight gathers
    double grad_bytes = 2;        // per element of gradient reductions
    // ZeRO-3 / PyTorch FSDP gather sharded weights again for the backward pass; false keeps the
    // forward's gathered weights until then (XLA without rematerialisation), at their memory cost.
    bool reshard_after_forward = true;
    // q/k/v and gate/up as one weight each (Megatron, MaxText's fused layers) or as separate
    // projections, whose input gradients are reduced one by one.
    bool fused_projections = true;
    double context_len = 0;  // keys per query in a decode step; 0: causal over seq_len
    // Experts split over tensor: their partial outputs summed per routed copy (Megatron) or after
    // the k copies of a token are combined (vLLM, TensorRT-LLM).
    bool combine_experts_before_reduce = false;
    // The busiest expert-parallel rank's routed tokens over the mean (1: balanced routing): that
    // rank receives, computes and returns this many times its share, and the others wait for it.
    double expert_imbalance = 1;
    // Bytes per element of routed tokens on their way to the experts (the combine moves activation_bytes).
    double dispatch_bytes = 2;
    // Serving: no backward pass, so no gradient or backward collectives are derived (the forward
    // ones, the GEMMs and the memory-bound ops are as in training).
    bool forward_only = false;
};

// DeepEP's fp8 dispatch (DeepSeek-V3 report, Sec. 3.3.2: activations quantised before the dispatch,
// combined in bf16): one byte per element and an fp32 scale per 128 (its 1 x 128 tiles).
inline constexpr double kFp8DispatchBytes = 1.0 + 4.0 / 128.0;

// InputError naming the strategy's axis when a size does not divide the dimension it splits.
// `moe_layer`: the layer's MLP is the model's mixture of experts (else its dense MLP).
// The attention block's projections among a layer's GEMMs (qkv or MLA's low-rank q/kv, and out): a
// checkpoint may store them in another dtype than the rest.
[[nodiscard]] bool is_attention_projection(const std::string& matmul_name);

[[nodiscard]] LayerWork derive_layer_work(const ModelSpec& model, const Strategy& strategy, const AxisSizes& sizes,
                                          const MicroBatch& workload, bool moe_layer);

// The output layer and loss, on the last pipeline stage: logits of the micro-batch's tokens over
// the local part of the vocabulary (split as the MLP's hidden activations are: Megatron's
// vocabulary-parallel output layer) and the fp32 softmax cross-entropy over them.
struct OutputWork {
    DerivedMatmul logits;
    double vocab_local = 0;
    // The softmax cross-entropy and its gradient pass over the fp32 logits nine times (upcast,
    // max, exponent sum and loss forward; the same and the gradient's write backward), unfused.
    [[nodiscard]] double loss_bytes() const { return 9.0 * logits_bytes(); }
    [[nodiscard]] double logits_bytes() const { return logits.rows * vocab_local * kLossBytes; }
    static constexpr double kLossBytes = 4;  // fp32
};

// `tokens`: rows of the logits on this device (a training micro-batch's tokens; the last token of
// each prompt or each decoded token when serving).
[[nodiscard]] OutputWork derive_output_work(const ModelSpec& model, const Strategy& strategy, const AxisSizes& sizes, double tokens);

// A multi-token prediction module's projection of [hidden; embedding] (2D wide) back to D, over
// `tokens` tokens, its output split as the MLP's hidden activations are. The module then runs a block
// like the model's last layer and the shared output head (DeepSeek-V3 report, Sec. 2.2).
[[nodiscard]] DerivedMatmul derive_mtp_projection(const ModelSpec& model, const Strategy& strategy, const AxisSizes& sizes, double tokens);

// Expected number of distinct experts that `tokens` tokens, each routed to top_k of n_experts
// uniformly, touch: n (1 - (1 - k/n)^tokens). Decode at small batch reads far fewer than all.
[[nodiscard]] double expected_experts_touched(double n_experts, double top_k, double tokens);

// Product of the sizes of `axes` (missing axes count as 1).
[[nodiscard]] std::int64_t axes_size(const AxisList& axes, const AxisSizes& sizes);

}  // namespace ridgeline
