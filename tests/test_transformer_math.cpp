// Transformer arithmetic checked against formulas worked by hand in each test.
#include <doctest/doctest.h>

#include "engine/layer_ops.hpp"
#include "model/transformer_math.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {
ModelSpec small_gqa() {
    ModelSpec m;
    m.name = "small";
    m.n_layers = 2;
    m.d_model = 64;
    m.n_heads = 8;
    m.n_kv_heads = 2;
    m.head_dim = 16;
    m.d_ff = 256;
    m.vocab_size = 1000;
    return m;
}
}  // namespace

TEST_CASE("parameter count of a small GQA model, term by term") {
    const ModelSpec m = small_gqa();
    // q 64*128, k 64*32, v 64*32, o 128*64 = 8192 + 2048 + 2048 + 8192 = 20480
    // gated MLP 3 * 64 * 256 = 49152; two RMSNorms 128; final norm 64; embeddings 2 * 64000
    const double per_layer = 20480 + 49152 + 128;
    const ParamCounts p = count_params(m);
    CHECK(p.attention_per_layer == 20480);
    CHECK(p.dense_mlp_per_layer == 49152);
    CHECK(p.total == 2 * per_layer + 64 + 128000);
    CHECK(p.active == p.total);

    ModelSpec tied = m;
    tied.tied_embeddings = true;
    CHECK(count_params(tied).total == p.total - 64000);
}

TEST_CASE("biases, layernorm, learned positions and qk-norm add their parameters") {
    ModelSpec m = small_gqa();
    m.mlp = MlpKind::plain;
    m.norm = NormKind::layernorm;
    m.linear_bias = true;
    m.learned_position_embeddings = 10;
    const ParamCounts p = count_params(m);
    // attention biases: q 128 + k 32 + v 32 + o 64 = 256; plain MLP 2*64*256 + biases 256 + 64
    CHECK(p.attention_per_layer == 20480 + 256);
    CHECK(p.dense_mlp_per_layer == 32768 + 320);
    CHECK(p.norms == 2 * 2 * 128 + 128);  // layernorm: weight and bias
    CHECK(p.embedding == 64000 + 640);

    ModelSpec qwen3 = small_gqa();
    qwen3.qk_norm = true;
    CHECK(count_params(qwen3).attention_per_layer == 20480 + 32);
}

TEST_CASE("MoE counts all experts in total and top-k plus shared in active") {
    ModelSpec m = small_gqa();
    m.moe = MoeSpec{8, 2, 32, 1, 1};  // 8 experts of width 32, top-2, one shared, first layer dense
    const ParamCounts p = count_params(m);
    const double expert = 3.0 * 64 * 32;  // 6144
    const double router = 64.0 * 8;
    CHECK(p.moe_layer_total == 9 * expert + router);
    CHECK(p.moe_layer_active == 3 * expert + router);
    const double shared = 2 * 20480 + 2 * 128 + 64 + 128000 + 49152;  // attention, norms, embeddings, 1 dense MLP
    CHECK(p.total == shared + p.moe_layer_total);
    CHECK(p.active == shared + p.moe_layer_active);
}

TEST_CASE("FLOPs per token: 2 per weight in matmuls, causal attention sees half the keys") {
    const ModelSpec m = small_gqa();
    const FlopsPerToken full = flops_per_token(m, 1024, false);
    // matmuls: 2 * (2 * (20480 + 49152) + 64000 unembedding)
    CHECK(full.matmul_forward == 2.0 * (2 * (20480 + 49152) + 64000));
    // attention: 2 layers * 2 FLOPs * 8 heads * (16 + 16) * 1024 keys
    CHECK(full.attention_forward == 2.0 * 2 * 8 * 32 * 1024);
    const FlopsPerToken causal = flops_per_token(m, 1024, true);
    CHECK(causal.attention_forward == doctest::Approx(full.attention_forward * 1025.0 / 2048.0));
    CHECK(causal.training() == doctest::Approx(3 * causal.forward()));
    using M = RecomputeModule;
    const auto again = [&](RecomputeModules modules) { return training_flops_with_recompute(m, 1024, true, modules) - causal.training(); };
    CHECK(again(static_cast<RecomputeModules>(M::layer)) == doctest::Approx(causal.forward()));
    CHECK(again(static_cast<RecomputeModules>(M::core_attention)) == doctest::Approx(causal.attention_forward));
    // The up and gate projections of both layers: 2 layers x 2 GEMMs x 2 x 64 x 256.
    CHECK(again(static_cast<RecomputeModules>(M::mlp_up)) == doctest::Approx(2.0 * 2 * 2 * 64 * 256));
    // Norms and activations are memory-bound: no FLOPs counted.
    CHECK(again(static_cast<unsigned>(M::norms) | static_cast<unsigned>(M::activation)) == 0);
}

TEST_CASE("KV cache per token: 2 * layers * kv_heads * head_dim * bytes, MLA caches its latent") {
    const ModelSpec m = small_gqa();
    CHECK(kv_cache_bytes_per_token(m, Dtype::bf16) == 2.0 * 2 * 2 * 16 * 2);
    CHECK(kv_cache_bytes_per_token(m, Dtype::int8) == 2.0 * 2 * 2 * 16 * 1);
    ModelSpec mla = m;
    mla.mla = MlaSpec{0, 32, 16, 8, 16};
    CHECK(kv_cache_bytes_per_token(mla, Dtype::bf16) == 2.0 * (32 + 8) * 2);
}

TEST_CASE("activations from the op list: each recomputed module drops exactly the tensors it produces") {
    const ModelSpec m = small_gqa();
    using M = RecomputeModule;
    const auto bytes = [&](unsigned modules, AttentionKernel kernel = AttentionKernel::fused) {
        return saved_elements_per_token(m, 512, saved_tensors(modules, kernel, false)) * 2.0;  // bf16
    };
    const double none = bytes(0);
    // Kept with nothing recomputed: 4 D-wide tensors, q/k/v (128 + 2*32), attention output 128,
    // gate/up/product 3*256, and the fused kernel's fp32 log-sum-exp of 8 heads (16 bf16 widths).
    CHECK(none == 2.0 * (4 * 64 + 192 + 128 + 3 * 256 + 2 * 8));
    // Unfused, the probabilities (heads x keys) replace the statistics.
    CHECK(bytes(0, AttentionKernel::unfused) - none == 2.0 * (8 * 512 - 2 * 8));
    const unsigned core = static_cast<unsigned>(M::core_attention);
    CHECK(none - bytes(core) == 2.0 * 2 * 8);
    CHECK(bytes(0, AttentionKernel::unfused) - bytes(core, AttentionKernel::unfused) == 2.0 * 8 * 512);
    CHECK(none - bytes(static_cast<unsigned>(M::norms)) == 2.0 * 2 * 64);        // both norm outputs
    CHECK(none - bytes(static_cast<unsigned>(M::activation)) == 2.0 * 256);      // gate * up
    CHECK(none - bytes(static_cast<unsigned>(M::mlp_up)) == 2.0 * 2 * 256);      // gate and up outputs
    CHECK(none - bytes(static_cast<unsigned>(M::attention_output)) == 2.0 * (128 + 2 * 8));
    CHECK(bytes(static_cast<unsigned>(M::mla_up_projection)) == none);  // not an MLA model
    CHECK(bytes(static_cast<unsigned>(M::layer)) == 2.0 * 64);         // the layer input only
}
