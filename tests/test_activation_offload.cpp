// Host-offloading recomputation policies (MaxText's qkv_proj_offloaded, minimal_offloaded): what they
// keep, apart from each layer's input, waits in host memory between the passes and crosses the
// host link each way. Bytes are worked by hand from Llama 2 70B's config.json (Meta: hidden 8192,
// 64 heads of 128, 8 KV heads, 80 layers, MLP 28672, gated); times from the report's own parts.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace test = ridgeline::test;

namespace {

// 256 v5e chips, FSDP over all of them: each holds one micro-batch of 2 x 2048 tokens.
const std::string kJob =
    "--model llama2-70b --hardware tpu-v5e-pod --chips 256 --fsdp 256 --dp 256 --seq-len 2048 --micro-batch 2 --global-batch-seqs 512 "
    "--stack maxtext ";
constexpr double kTokens = 2.0 * 2048, kLayers = 80, kBf16 = 2;
constexpr double kQkv = 8192 + 2 * 8 * 128;  // q, k and v of one token

}  // namespace

TEST_CASE("activation offload: the chip keeps each layer's input and two layers in transit, the host the rest") {
    const nlohmann::json kept = test::train_json(kJob + "--recompute maxtext-save-qkv-proj");
    const nlohmann::json offloaded = test::train_json(kJob + "--recompute maxtext-qkv-proj-offloaded");
    const double layer_input = kTokens * 8192 * kBf16, qkv = kTokens * kQkv * kBf16;
    CHECK(kept["memory"]["activations_bytes"].get<double>() == doctest::Approx(kLayers * (layer_input + qkv)));
    CHECK_FALSE(kept["memory"].contains("host_activations_bytes"));
    CHECK(offloaded["memory"]["activations_bytes"].get<double>() == doctest::Approx(kLayers * layer_input + 2 * qkv));
    CHECK(offloaded["memory"]["host_activations_bytes"].get<double>() == doctest::Approx(kLayers * qkv));
    // 84 MB a layer at the v5e's 16 GB/s host link is 5 ms, under the layer's forward pass: nothing shows.
    CHECK(test::step_part_s(offloaded, "activation offload (exposed)") == 0.0);
    CHECK(offloaded["step_time_s"].get<double>() == doctest::Approx(kept["step_time_s"].get<double>()).epsilon(1e-12));
    // Offloading is what lets this plan fit the v5e's 16 GiB.
    CHECK_FALSE(kept["fits"].get<bool>());
    CHECK(offloaded["fits"].get<bool>());

    // minimal_offloaded sends the projections' and the MLP's matmul outputs: q/k/v, the residual after
    // the output projection, and the up and gate outputs.
    const nlohmann::json minimal = test::train_json(kJob + "--recompute maxtext-minimal-offloaded");
    CHECK(minimal["memory"]["host_activations_bytes"].get<double>() ==
          doctest::Approx(kLayers * kTokens * (kQkv + 8192 + 2 * 28672) * kBf16));
}

TEST_CASE("activation offload: a transfer longer than the pass it hides under is exposed, each way") {
    // At 1 GB/s the 84 MB of q/k/v take 84 ms: more than a layer's forward pass, less than its
    // backward with the recomputation.
    const nlohmann::json slow = test::train_json(kJob + "--recompute maxtext-qkv-proj-offloaded --set chip.host_link.bandwidth=1GB/s");
    const double transfer_s = kTokens * kQkv * kBf16 / 1e9;
    const auto& layer = slow["per_layer"];
    const double forward_s = layer["forward_s"].get<double>(), backward_s = layer["backward_s"].get<double>() + layer["recompute_s"].get<double>();
    REQUIRE(transfer_s > forward_s);
    REQUIRE(transfer_s < backward_s);
    CHECK(test::step_part_s(slow, "activation offload (exposed)") == doctest::Approx(kLayers * (transfer_s - forward_s)));
    for (const auto& part : slow["breakdown"])
        if (part["name"] == "activation offload (exposed)") CHECK(part["bound"] == "host link");
}

TEST_CASE("save_qkv_proj recomputes the output projection: 2 x 8192 x 8192 FLOPs a token a layer more than save_dot_except_mlp") {
    const nlohmann::json qkv = test::train_json(kJob + "--recompute maxtext-save-qkv-proj");
    const nlohmann::json projections = test::train_json(kJob + "--recompute maxtext-save-dot-except-mlp");
    const auto repeated = [](const nlohmann::json& r) {
        return (r["hfu"].get<double>() / r["mfu"].get<double>() - 1.0) * r["model_flops_per_token"].get<double>();
    };
    CHECK(repeated(qkv) - repeated(projections) == doctest::Approx(2.0 * 8192 * 8192 * kLayers).epsilon(1e-6));
    CHECK(test::step_part_s(qkv, "recomputation") > test::step_part_s(projections, "recomputation"));
}

TEST_CASE("MaxText's mesh rules split the residual stream's embedding over the tensor axis: each chip keeps its slice") {
    // strategies/maxtext.json: residual {batch: [data, fsdp], embed: [tensor]}. Under full
    // recomputation a chip keeps each layer's input only: 2 x 2048 tokens of 8192 / 4 values.
    const std::string job = "--model llama2-70b --hardware tpu-v5e-pod --chips 256 --tp 4 --fsdp 64 --dp 64 --seq-len 2048 "
                            "--micro-batch 2 --global-batch-seqs 128 --stack maxtext --strategy maxtext --recompute full";
    const nlohmann::json report = test::train_json(job);
    CHECK(report["memory"]["activations_bytes"].get<double>() == doctest::Approx(kLayers * kTokens * 8192 / 4 * kBf16));
}
