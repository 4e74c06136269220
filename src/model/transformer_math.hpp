#pragma once
// Parameter, FLOP, KV-cache and activation arithmetic of a decoder transformer. Pure functions
// of a ModelSpec; counts are doubles (exact below 2^53, and products of large dims cannot overflow).
#include <cstddef>

#include "core/dtype.hpp"
#include "model/model_spec.hpp"

namespace ridgeline {

struct ParamCounts {
    double embedding = 0;            // token (and learned position) embeddings
    double unembedding = 0;          // output projection; 0 when tied to the embedding
    double attention_per_layer = 0;  // projections, their biases and q/k norms
    double norms = 0;                // all layer norms including the final one
    double dense_mlp_per_layer = 0;
    double moe_layer_total = 0;      // routed + shared experts + router of one MoE layer
    double moe_layer_active = 0;     // what one token touches in an MoE layer
    double mtp_module = 0;           // one multi-token prediction module (not in total: the published counts leave it out)
    double total = 0;
    double active = 0;               // touched by one token
};

[[nodiscard]] ParamCounts count_params(const ModelSpec& model);

struct FlopsPerToken {
    double matmul_forward = 0;     // weight matmuls incl. unembedding, active experts only
    double attention_forward = 0;  // QK^T and AV at the given context
    [[nodiscard]] double forward() const { return matmul_forward + attention_forward; }
    // Backward costs twice the forward (gradients w.r.t. inputs and weights).
    [[nodiscard]] double training() const { return 3.0 * forward(); }
};

// Keys a query attends to, averaged over the queries of a causal sequence of seq_len tokens
// (training, prefill: (seq_len + 1) / 2 without windows) and over the model's layers.
[[nodiscard]] double mean_causal_keys(const ModelSpec& model, double seq_len);
// Keys the newest token of a sequence at `context` tokens attends to (a decode step), averaged over layers.
[[nodiscard]] double mean_decode_keys(const ModelSpec& model, double context);
// Tokens of a sequence at `context` tokens that the KV cache must hold, averaged over layers: a
// window or chunk caches at most its length.
[[nodiscard]] double mean_cached_tokens(const ModelSpec& model, double context);

// causal: each query sees the keys before it (mean_causal_keys); else a context of seq_len (mean_decode_keys).
[[nodiscard]] FlopsPerToken flops_per_token(const ModelSpec& model, double seq_len, bool causal);
// The 6N rule: 6 x (active) parameters per token.
[[nodiscard]] double six_n_flops_per_token(const ModelSpec& model);

// KV cache per token of context while no window is full (every layer caches every token).
[[nodiscard]] double kv_cache_bytes_per_token(const ModelSpec& model, Dtype kv_dtype);
// KV cache of one sequence at `context` tokens, windows counted.
[[nodiscard]] double kv_cache_bytes_per_sequence(const ModelSpec& model, double context, Dtype kv_dtype);

// Tensors of one layer that a checkpoint policy may keep for the backward pass (one token's worth).
enum class SavedTensor : unsigned {
    layer_input = 1u << 0,        // also the input of the attention norm
    attention_norm_output = 1u << 1,  // input of the QKV projections
    qkv = 1u << 2,                // q, k, v (MLA: up-projected from the latents)
    attention_probs = 1u << 3,    // softmax probabilities of unfused attention: one row per head
    attention_output = 1u << 4,   // input of the output projection
    mlp_norm_input = 1u << 5,     // residual stream after attention
    mlp_norm_output = 1u << 6,    // input of the MLP (or of the router and experts)
    mlp_hidden = 1u << 7,         // outputs of the up (and gate) matmuls
    mlp_activation = 1u << 8,     // activation output (gated: gate * up), input of the down matmul
    mlp_output = 1u << 9,         // output of the down matmul
    attention_stats = 1u << 10,   // a fused kernel's softmax log-sum-exp: one fp32 per head
    mla_latents = 1u << 11,       // MLA's low-rank q and kv latents, inputs of the up-projections
};
using SavedTensors = unsigned;  // a bit set of SavedTensor
inline constexpr std::size_t kSavedTensorCount = 12;
[[nodiscard]] constexpr SavedTensors operator|(SavedTensor a, SavedTensor b) {
    return static_cast<unsigned>(a) | static_cast<unsigned>(b);
}
[[nodiscard]] constexpr SavedTensors operator|(SavedTensors a, SavedTensor b) { return a | static_cast<unsigned>(b); }

// How the attention core runs: fused (FlashAttention, cuDNN, Splash: the probabilities stay on
// chip and are recomputed in the backward pass) or as separate matmuls and a softmax.
enum class AttentionKernel { fused, unfused };

// The modules a recomputation policy runs again in the backward pass instead of keeping their
// outputs (Megatron-Core's recompute_modules, MaxText's remat policies, torchtitan's op-level
// checkpointing, as named policies in recompute/*.json). `layer` is full recomputation: only the
// layer input is kept.
enum class RecomputeModule : unsigned {
    core_attention = 1u << 0,     // softmax statistics or probabilities (Megatron's core_attn)
    attention_output = 1u << 1,   // the attention core's output too (JAX policies that save only projections)
    norms = 1u << 2,              // the attention and MLP norms' outputs
    activation = 1u << 3,         // the MLP's (or experts') activation output
    mlp_up = 1u << 4,             // the up (and gate) projections' outputs
    mla_up_projection = 1u << 5,  // MLA's q, k, v from their latents
    // The output projection: with the layer input it makes the residual stream the MLP norm reads
    // (JAX policies that save only q, k and v).
    attention_projection = 1u << 6,
    layer = 1u << 7,
};
using RecomputeModules = unsigned;  // a bit set of RecomputeModule; 0 recomputes nothing
inline constexpr std::size_t kRecomputeModuleCount = 8;
[[nodiscard]] constexpr bool recomputes(RecomputeModules modules, RecomputeModule module) {
    return (modules & static_cast<unsigned>(module)) != 0;
}

// What a policy keeps: every tensor whose producer is not recomputed (under a fused kernel the
// softmax statistics rather than the probabilities).
// `latent_attention`: the model is MLA, whose q, k and v the mla_up_projection module recomputes.
[[nodiscard]] SavedTensors saved_tensors(RecomputeModules recomputed, AttentionKernel attention, bool latent_attention);
// Of what a host-offloading policy keeps, what goes to the host: all but the layer input, which the
// scan over layers carries on the chip (MaxText's offloading policies name only matmul outputs).
[[nodiscard]] constexpr SavedTensors offloaded_tensors(SavedTensors kept) { return kept & ~static_cast<SavedTensors>(SavedTensor::layer_input); }
// Training FLOPs including what recomputation repeats (hardware FLOPs, for HFU).
[[nodiscard]] double training_flops_with_recompute(const ModelSpec& model, double seq_len, bool causal,
                                                   RecomputeModules recomputed);

// The arithmetic of one matmul in the roofline sense.
[[nodiscard]] inline double matmul_flops(double rows, double contract, double cols) {
    return 2.0 * rows * contract * cols;
}

}  // namespace ridgeline
