// The roofline of one matmul and the ridge points of shipped chips, against hand-worked numbers.
#include <doctest/doctest.h>

#include "engine/roofline.hpp"
#include "hardware/catalog.hpp"
#include "test_support.hpp"

using namespace ridgeline;

TEST_CASE("matmul FLOPs, bytes and bounds by hand on H100") {
    const ChipSpec h100 = resolve_hardware("h100-sxm", test::source_dir()).chip;
    // [256, 8192] x [8192, 8192] bf16: FLOPs 2*256*8192^2; bytes 2*(256*8192 + 8192^2 + 256*8192)
    const RooflineTime t = matmul_roofline(h100, {256, 8192, 8192}, {});
    const double flops = 2.0 * 256 * 8192 * 8192;
    const double bytes = 2.0 * (256 * 8192 + 8192.0 * 8192 + 256 * 8192);
    CHECK(t.flops == flops);
    CHECK(t.bytes == bytes);
    CHECK(t.compute_s == doctest::Approx(flops / h100.peak_flops(Dtype::bf16)));
    CHECK(t.memory_s == doctest::Approx(bytes / h100.hbm_bw_Bps));
    CHECK(t.lower_bound_s() == doctest::Approx(std::max(t.compute_s, t.memory_s)));
    CHECK(t.upper_bound_s() == doctest::Approx(t.compute_s + t.memory_s));
    // Intensity ~ 256 * 8192 / (8192 + 2 * 256) < 295 (the H100 ridge): memory-bound.
    CHECK(t.bound() == Bound::memory);
    CHECK(matmul_roofline(h100, {1024, 8192, 8192}, {}).bound() == Bound::compute);
}

TEST_CASE("the bound switches at the critical batch") {
    const ChipSpec v5e = resolve_hardware("tpu-v5e", test::source_dir()).chip;
    const double critical = critical_batch_tokens(v5e, {});
    CHECK(critical == doctest::Approx(v5e.peak_flops(Dtype::bf16) / v5e.hbm_bw_Bps));
    // With D, F huge the activation bytes vanish and the switch happens at the critical batch.
    const double big = 1e7;
    CHECK(matmul_roofline(v5e, {0.95 * critical, big, big}, {}).bound() == Bound::memory);
    CHECK(matmul_roofline(v5e, {1.05 * critical, big, big}, {}).bound() == Bound::compute);
    // int8 weights with bf16 arithmetic halve it; int8 weights with int8 arithmetic keep ~2x the peak.
    CHECK(critical_batch_tokens(v5e, {Dtype::bf16, Dtype::int8, Dtype::bf16}) == doctest::Approx(critical / 2));
}

TEST_CASE("ridge points: HBM, ICI axis (bidirectional) and DCN of TPU v5p as the book derives them") {
    const Hardware v5p = resolve_hardware("tpu-v5p", test::source_dir());
    bool saw_ici = false, saw_dcn = false;
    for (const RidgePoint& p : ridge_points(v5p)) {
        if (p.dtype != Dtype::bf16) continue;
        if (p.level == "ici") {
            CHECK(p.intensity_flops_per_byte == doctest::Approx(2550).scale(0).epsilon(0.01));  // 4.59e14 / 1.8e11
            saw_ici = true;
        }
        if (p.level == "scale-out") {
            CHECK(p.intensity_flops_per_byte == doctest::Approx(73440).scale(0).epsilon(0.01));  // 4.59e14 / 6.25e9
            saw_dcn = true;
        }
    }
    CHECK(saw_ici);
    CHECK(saw_dcn);
}

TEST_CASE("ridge points of a DGX H100: NVLink 2200 and node egress ~2475 FLOPs/byte") {
    const Hardware dgx = resolve_hardware("dgx-h100", test::source_dir());
    for (const RidgePoint& p : ridge_points(dgx)) {
        if (p.dtype != Dtype::bf16) continue;
        if (p.level == "nvlink") CHECK(p.intensity_flops_per_byte == doctest::Approx(2200).scale(0).epsilon(0.01));
        if (p.level == "scale-out per domain") CHECK(p.intensity_flops_per_byte == doctest::Approx(2475).scale(0).epsilon(0.01));
    }
}

#include "engine/layer_ops.hpp"
#include "model/model_catalog.hpp"
#include "model/transformer_math.hpp"

TEST_CASE("a layer's ops add up to the model's FLOPs per token, for dense, MoE and MLA models") {
    for (const char* name : {"llama3-70b", "mixtral-8x7b", "deepseek-v3", "gpt3-175b"}) {
        CAPTURE(name);
        const ModelSpec model = resolve_model(name, test::source_dir());
        LayerWorkload workload;
        workload.sequences = 4;
        workload.seq_len = 4096;
        // Enough tokens that every expert is touched, so the MoE layer does top-k work per token.
        const auto ops = layer_ops(model, workload);
        double layer_flops = 0;
        for (const auto& op : ops) layer_flops += op.flops;
        const FlopsPerToken per_token = flops_per_token(model, workload.seq_len, true);
        const double unembedding = 2.0 * static_cast<double>(model.vocab_size * model.d_model);
        CHECK(layer_flops * static_cast<double>(model.n_layers) ==
              doctest::Approx((per_token.forward() - unembedding) * workload.tokens()).scale(0).epsilon(1e-3));
    }
}

TEST_CASE("decode attention reads the whole KV cache, experts touched follow 1 - (1 - k/E)^tokens") {
    const ModelSpec model = resolve_model("llama3-70b", test::source_dir());
    LayerWorkload decode;
    decode.phase = Phase::decode;
    decode.sequences = 8;
    decode.seq_len = 4096;
    for (const auto& op : layer_ops(model, decode)) {
        if (!op.attention_core) continue;
        const double kv_bytes = 8 * 4096 * 2.0 * 8 * 128 * 2;  // sequences x context x (K and V) x heads x dim x bf16
        const double q_and_out = 8 * 2.0 * 8192 * 2;
        CHECK(op.bytes == doctest::Approx(kv_bytes + q_and_out));
    }
    CHECK(expected_experts_touched(8, 2, 1) == doctest::Approx(2.0));
    CHECK(expected_experts_touched(8, 2, 2) == doctest::Approx(8 * (1 - 0.75 * 0.75)));
    CHECK(expected_experts_touched(256, 8, 1e6) == doctest::Approx(256.0));
}

TEST_CASE("a training micro-batch of LLaMA-3 70B is compute-bound on TPU v5p, batch-1 decode is memory-bound") {
    const Hardware v5p = resolve_hardware("tpu-v5p", test::source_dir());
    const ModelSpec model = resolve_model("llama3-70b", test::source_dir());
    LayerWorkload training;
    training.sequences = 1;
    training.seq_len = 4096;
    CHECK(place_on_roofline(v5p.chip, layer_ops(model, training), Dtype::bf16).bound() == Bound::compute);
    LayerWorkload decode;
    decode.phase = Phase::decode;
    decode.seq_len = 4096;
    const LayerRoofline layer = place_on_roofline(v5p.chip, layer_ops(model, decode), Dtype::bf16);
    CHECK(layer.bound() == Bound::memory);
    // Batch-1 decode time is about the layer's weight bytes over HBM bandwidth (the book's latency floor).
    const double weight_bytes = 2.0 * (count_params(model).attention_per_layer + count_params(model).dense_mlp_per_layer);
    CHECK(layer.time_s == doctest::Approx(weight_bytes / v5p.chip.hbm_bw_Bps).scale(0).epsilon(0.02));
}
