#pragma once
// A decoder-only transformer, dense or mixture-of-experts, as plain numbers. Loaded from the
// project's JSON (model/model_loader.cpp) or a Hugging Face config.json (model/hf_config.cpp).
#include <cstdint>
#include <optional>
#include <string>

namespace ridgeline {

enum class MlpKind { gated, plain };  // gated: up, gate and down matrices (SwiGLU); plain: up and down
enum class NormKind { rmsnorm, layernorm };

struct MoeSpec {
    std::int64_t n_experts = 0;
    std::int64_t top_k = 0;
    std::int64_t d_ff_expert = 0;
    std::int64_t n_shared_experts = 0;    // always-active experts of width d_ff_expert
    std::int64_t first_dense_layers = 0;  // leading layers with a dense MLP of width d_ff
    // After those, every layer_step-th layer is MoE and the others dense (Llama 4 Maverick: 2;
    // HF interleave_moe_layer_step, decoder_sparse_step).
    std::int64_t layer_step = 1;
    // Group-limited routing (DeepSeek-V3: experts in 8 groups, a token's top-k drawn from 4 of
    // them, which training places on at most 4 nodes). 0: routing is not limited.
    std::int64_t routing_groups = 0;
    std::int64_t routing_groups_per_token = 0;
};

// DeepSeek multi-head latent attention, described by its projection shapes.
struct MlaSpec {
    std::int64_t q_lora_rank = 0;  // 0: queries projected directly from d_model
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_nope_head_dim = 0;
    std::int64_t qk_rope_head_dim = 0;
    std::int64_t v_head_dim = 0;
};

// Local attention (Mistral, Gemma 2/3, GPT-OSS: a sliding window of the last `tokens` keys;
// Llama 4: chunks of `tokens` that attend only within themselves). `local_layers` of the model's
// layers attend locally; the others see the whole context.
enum class LocalAttention { sliding, chunked };
struct AttentionWindow {
    LocalAttention kind = LocalAttention::sliding;
    std::int64_t tokens = 0;
    std::int64_t local_layers = 0;
};

struct ModelSpec {
    std::string name;
    std::string description;
    std::int64_t n_layers = 0;
    std::int64_t d_model = 0;
    std::int64_t n_heads = 0;
    std::int64_t n_kv_heads = 0;
    std::int64_t head_dim = 0;
    std::int64_t d_ff = 0;
    std::int64_t vocab_size = 0;
    MlpKind mlp = MlpKind::gated;
    NormKind norm = NormKind::rmsnorm;
    bool tied_embeddings = false;
    bool qkv_bias = false;     // biases on the q, k, v projections only (Qwen2)
    bool linear_bias = false;  // biases on every linear layer (GPT-3)
    bool qk_norm = false;      // per-head norms on q and k (Qwen3)
    std::int64_t learned_position_embeddings = 0;
    std::optional<MoeSpec> moe;
    std::optional<MlaSpec> mla;
    std::optional<AttentionWindow> window;
    std::int64_t context_length = 0;  // longest context the model was trained for; 0: not stated
    // Multi-token prediction modules (DeepSeek-V3): each a projection of [norm(h); norm(emb)] from
    // 2 d_model to d_model and one more transformer block (an MoE block where the model has them),
    // sharing the embedding and output head; trained beside the model, drafts for speculative decoding.
    std::int64_t mtp_depth = 0;
    std::optional<double> published_params;
    std::optional<double> published_active_params;
    std::optional<double> published_mtp_params;  // all multi-token prediction modules

    // Tensor parallelism splits the KV heads, or (above their count, as PaLM's multi-query attention
    // and vLLM do) replicates them so that each rank holds one.
    [[nodiscard]] bool kv_heads_fit_tensor(std::int64_t tp) const { return mla.has_value() || n_kv_heads % tp == 0 || tp % n_kv_heads == 0; }
    // Ranks holding distinct KV heads: tp, or the head count when they are replicated.
    [[nodiscard]] std::int64_t kv_head_split(std::int64_t tp) const { return mla ? 1 : (tp > n_kv_heads ? n_kv_heads : tp); }
    [[nodiscard]] std::int64_t moe_layers() const { return moe ? (n_layers - moe->first_dense_layers) / moe->layer_step : 0; }
    [[nodiscard]] std::int64_t dense_layers() const { return n_layers - moe_layers(); }
};

}  // namespace ridgeline
