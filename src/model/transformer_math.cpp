#include "model/transformer_math.hpp"

#include <algorithm>
#include <cmath>

namespace ridgeline {

namespace {

double d(std::int64_t value) { return static_cast<double>(value); }

double norm_params(const ModelSpec& model, double width) {
    return model.norm == NormKind::layernorm ? 2.0 * width : width;  // layernorm adds a bias
}

double mlp_matmul_params(const ModelSpec& model, double d_ff) {
    return (model.mlp == MlpKind::gated ? 3.0 : 2.0) * d(model.d_model) * d_ff;
}

double mlp_params(const ModelSpec& model, double d_ff) {
    double params = mlp_matmul_params(model, d_ff);
    if (model.linear_bias) params += (model.mlp == MlpKind::gated ? 2.0 : 1.0) * d_ff + d(model.d_model);
    return params;
}

// Query/key width per head and value width per head.
double qk_head_dim(const ModelSpec& model) {
    return model.mla ? d(model.mla->qk_nope_head_dim + model.mla->qk_rope_head_dim) : d(model.head_dim);
}
double v_head_dim(const ModelSpec& model) { return model.mla ? d(model.mla->v_head_dim) : d(model.head_dim); }

double attention_matmul_params(const ModelSpec& model) {
    const double D = d(model.d_model), N = d(model.n_heads);
    if (model.mla) {
        const MlaSpec& mla = *model.mla;
        const double q = mla.q_lora_rank > 0 ? D * d(mla.q_lora_rank) + d(mla.q_lora_rank) * N * qk_head_dim(model)
                                             : D * N * qk_head_dim(model);
        const double kv_down = D * d(mla.kv_lora_rank + mla.qk_rope_head_dim);
        const double kv_up = d(mla.kv_lora_rank) * N * d(mla.qk_nope_head_dim + mla.v_head_dim);
        const double out = N * v_head_dim(model) * D;
        return q + kv_down + kv_up + out;
    }
    const double K = d(model.n_kv_heads), H = d(model.head_dim);
    return D * H * (2.0 * N + 2.0 * K);
}

double attention_params(const ModelSpec& model) {
    double params = attention_matmul_params(model);
    const double N = d(model.n_heads), K = d(model.n_kv_heads), H = d(model.head_dim);
    if (model.mla) {
        // The low-rank latents are normalised before their up-projections.
        params += d(model.mla->kv_lora_rank) + d(model.mla->q_lora_rank);
    }
    if (model.qkv_bias || model.linear_bias) params += (N + 2.0 * K) * H;
    if (model.linear_bias) params += d(model.d_model);
    if (model.qk_norm) params += 2.0 * qk_head_dim(model);
    return params;
}

double router_params(const ModelSpec& model) { return d(model.d_model) * d(model.moe->n_experts); }

}  // namespace

ParamCounts count_params(const ModelSpec& model) {
    ParamCounts counts;
    const double D = d(model.d_model);
    counts.embedding = d(model.vocab_size) * D + d(model.learned_position_embeddings) * D;
    counts.unembedding = model.tied_embeddings ? 0.0 : d(model.vocab_size) * D;
    counts.attention_per_layer = attention_params(model);
    counts.norms = d(model.n_layers) * 2.0 * norm_params(model, D) + norm_params(model, D);
    counts.dense_mlp_per_layer = mlp_params(model, d(model.d_ff));
    if (model.moe) {
        const MoeSpec& moe = *model.moe;
        const double expert = mlp_params(model, d(moe.d_ff_expert));
        counts.moe_layer_total = d(moe.n_experts + moe.n_shared_experts) * expert + router_params(model);
        counts.moe_layer_active = d(moe.top_k + moe.n_shared_experts) * expert + router_params(model);
    }
    // Block (an MoE block if the model has them) + projection 2D -> D + norms of h, the embedding,
    // and the shared head's input; the embedding and head themselves are the model's.
    const double block = counts.attention_per_layer + 2.0 * norm_params(model, D) +
                         (model.moe ? counts.moe_layer_total : counts.dense_mlp_per_layer);
    counts.mtp_module = d(model.mtp_depth) > 0 ? block + 2.0 * D * D + 3.0 * norm_params(model, D) : 0.0;
    const double shared = counts.embedding + counts.unembedding + counts.norms +
                          d(model.n_layers) * counts.attention_per_layer +
                          d(model.dense_layers()) * counts.dense_mlp_per_layer;
    counts.total = shared + d(model.moe_layers()) * counts.moe_layer_total;
    counts.active = shared + d(model.moe_layers()) * counts.moe_layer_active;
    return counts;
}

namespace {

// The share of layers that attend locally, and a local layer's value of a quantity next to a global one's.
double over_layers(const ModelSpec& model, double local, double global) {
    if (!model.window) return global;
    const double local_share = d(model.window->local_layers) / d(model.n_layers);
    return local_share * local + (1.0 - local_share) * global;
}

// Sum over positions p = 1..n of min(p, w): the keys a sliding window of w shows n causal queries.
double sliding_key_sum(double n, double w) {
    return n <= w ? n * (n + 1.0) / 2.0 : w * (w + 1.0) / 2.0 + (n - w) * w;
}

}  // namespace

double mean_causal_keys(const ModelSpec& model, double seq_len) {
    const double global = (seq_len + 1.0) / 2.0;
    if (!model.window) return global;
    const double w = d(model.window->tokens);
    double local = 0;
    if (model.window->kind == LocalAttention::sliding) {
        local = sliding_key_sum(seq_len, w) / seq_len;
    } else {  // whole chunks, then the remainder, each causal within itself
        const double chunks = std::floor(seq_len / w), rest = seq_len - chunks * w;
        local = (chunks * w * (w + 1.0) / 2.0 + rest * (rest + 1.0) / 2.0) / seq_len;
    }
    return over_layers(model, local, global);
}

double mean_decode_keys(const ModelSpec& model, double context) {
    if (!model.window) return context;
    const double w = d(model.window->tokens);
    // The newest token's chunk holds the tokens since the last chunk boundary, itself included.
    const double local = model.window->kind == LocalAttention::sliding ? std::min(context, w)
                                                                       : context - w * std::ceil(context / w - 1.0);
    return over_layers(model, local, context);
}

double mean_cached_tokens(const ModelSpec& model, double context) {
    if (!model.window) return context;
    return over_layers(model, std::min(context, d(model.window->tokens)), context);
}

FlopsPerToken flops_per_token(const ModelSpec& model, double seq_len, bool causal) {
    FlopsPerToken flops;
    double matmul_params = d(model.n_layers) * attention_matmul_params(model) +
                           d(model.dense_layers()) * mlp_matmul_params(model, d(model.d_ff)) +
                           d(model.vocab_size) * d(model.d_model);  // unembedding, tied or not
    if (model.moe) {
        const MoeSpec& moe = *model.moe;
        matmul_params += d(model.moe_layers()) *
                         (d(moe.top_k + moe.n_shared_experts) * mlp_matmul_params(model, d(moe.d_ff_expert)) +
                          router_params(model));
    }
    flops.matmul_forward = 2.0 * matmul_params;
    const double keys_seen = causal ? mean_causal_keys(model, seq_len) : mean_decode_keys(model, seq_len);
    const double per_key = 2.0 * d(model.n_heads) * (qk_head_dim(model) + v_head_dim(model));
    flops.attention_forward = d(model.n_layers) * per_key * keys_seen;
    return flops;
}

double training_flops_with_recompute(const ModelSpec& model, double seq_len, bool causal, RecomputeModules recomputed) {
    const FlopsPerToken flops = flops_per_token(model, seq_len, causal);
    if (recomputes(recomputed, RecomputeModule::layer)) return flops.training() + flops.forward();
    double again = 0;
    if (recomputes(recomputed, RecomputeModule::core_attention) || recomputes(recomputed, RecomputeModule::attention_output))
        again += flops.attention_forward;
    if (recomputes(recomputed, RecomputeModule::mlp_up)) {
        const double up = model.mlp == MlpKind::gated ? 2.0 : 1.0;  // gate and up, or up
        double width = d(model.dense_layers()) * d(model.d_ff);
        if (model.moe) width += d(model.moe_layers()) * d(model.moe->top_k + model.moe->n_shared_experts) * d(model.moe->d_ff_expert);
        again += 2.0 * up * d(model.d_model) * width;
    }
    if (recomputes(recomputed, RecomputeModule::attention_projection)) {
        const double v_head = model.mla ? d(model.mla->v_head_dim) : d(model.head_dim);
        again += 2.0 * d(model.n_layers) * d(model.n_heads) * v_head * d(model.d_model);
    }
    if (recomputes(recomputed, RecomputeModule::mla_up_projection) && model.mla) {
        const MlaSpec& mla = *model.mla;
        const double N = d(model.n_heads);
        again += 2.0 * d(model.n_layers) * (d(mla.q_lora_rank) * N * qk_head_dim(model) +
                                            d(mla.kv_lora_rank) * N * d(mla.qk_nope_head_dim + mla.v_head_dim));
    }
    return flops.training() + again;
}

double six_n_flops_per_token(const ModelSpec& model) { return 6.0 * count_params(model).active; }

double kv_cache_bytes_per_token(const ModelSpec& model, Dtype kv_dtype) {
    const double bytes = bytes_per_element(kv_dtype);
    if (model.mla)  // MLA caches the compressed latent and the shared rope key, not per-head K and V
        return d(model.n_layers) * d(model.mla->kv_lora_rank + model.mla->qk_rope_head_dim) * bytes;
    return 2.0 * d(model.n_layers) * d(model.n_kv_heads) * d(model.head_dim) * bytes;
}

double kv_cache_bytes_per_sequence(const ModelSpec& model, double context, Dtype kv_dtype) {
    return kv_cache_bytes_per_token(model, kv_dtype) * mean_cached_tokens(model, context);
}

SavedTensors saved_tensors(RecomputeModules recomputed, AttentionKernel attention, bool latent_attention) {
    using T = SavedTensor;
    if (recomputes(recomputed, RecomputeModule::layer)) return static_cast<SavedTensors>(T::layer_input);
    // The down projection's output only joins the residual stream; nothing needs it again.
    SavedTensors saved = T::layer_input | T::attention_norm_output | T::qkv | T::attention_output | T::mlp_norm_input |
                         T::mlp_norm_output | T::mlp_hidden | T::mlp_activation | T::mla_latents;
    saved |= static_cast<unsigned>(attention == AttentionKernel::fused ? T::attention_stats : T::attention_probs);
    const auto drop_if = [&](RecomputeModule module, SavedTensors tensors) {
        if (recomputes(recomputed, module)) saved &= ~tensors;
    };
    drop_if(RecomputeModule::core_attention, T::attention_probs | T::attention_stats);
    drop_if(RecomputeModule::attention_output, T::attention_probs | T::attention_stats | T::attention_output);
    drop_if(RecomputeModule::norms, T::attention_norm_output | T::mlp_norm_output);
    drop_if(RecomputeModule::activation, static_cast<SavedTensors>(T::mlp_activation));
    drop_if(RecomputeModule::mlp_up, static_cast<SavedTensors>(T::mlp_hidden));
    drop_if(RecomputeModule::attention_projection, static_cast<SavedTensors>(T::mlp_norm_input));
    // Only MLA's q, k and v come from latents the policy keeps.
    if (latent_attention) drop_if(RecomputeModule::mla_up_projection, static_cast<SavedTensors>(T::qkv));
    return saved;
}

}  // namespace ridgeline
