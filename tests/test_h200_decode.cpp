// The kernel model against a LLaMA-3 8B decoder layer's decode step measured on a real H200 and H100
// under CUDA graphs (tests/data/reference/gpu-moe-fp8-decode-*.json, scripts/gpu/moe_fp8_decode.py):
// RMSNorm, QKV, RoPE, the KV-cache write, SDPA over the cache, o-proj, the gated MLP, in bf16.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace {

// Predicted over measured, less one, for each case of `file`'s decode layer on `chip`; `cases`
// gets them as text for the message.
std::vector<double> decode_errors(const std::string& chip, const std::string& file, std::string& cases) {
    const nlohmann::json measured = ridgeline::test::read_json(ridgeline::test::data_file("reference/" + file));
    std::vector<double> errors;
    for (const auto& c : measured.at("decode_layer").at("cases")) {
        const int batch = c.at("batch"), kv = c.at("kv_len");
        // A layer's time in a graph of four chained layers: the replay's launch gap shared out.
        const double measured_s = c.at("graph_4_layers").at("median_s").get<double>() / 4.0;
        const auto result = ridgeline::test::run_ridgeline("roofline --hardware " + chip + " --model llama3-8b --phase decode --batch " +
                                                           std::to_string(batch) + " --seq-len " + std::to_string(kv) +
                                                           " --stack pytorch-eager --json");
        REQUIRE(result.exit_code == 0);
        const double predicted_s = nlohmann::json::parse(result.out).at("layer").at("predicted_s").get<double>();
        errors.push_back(predicted_s / measured_s - 1.0);
        cases += " b" + std::to_string(batch) + "/kv" + std::to_string(kv) + " " + std::to_string(static_cast<int>(std::lround(100 * errors.back()))) + "%";
    }
    REQUIRE(errors.size() == 8);
    return errors;
}

std::vector<double> sorted_magnitudes(const std::vector<double>& errors) {
    std::vector<double> magnitudes;
    for (const double e : errors) magnitudes.push_back(std::fabs(e));
    std::sort(magnitudes.begin(), magnitudes.end());
    return magnitudes;
}

}  // namespace

TEST_CASE("kernel model: a LLaMA-3 8B decode layer under CUDA graphs on a real H200") {
    std::string cases;
    const std::vector<double> magnitudes = sorted_magnitudes(decode_errors("h200", "gpu-moe-fp8-decode-h200.json", cases));
    const double median = 0.5 * (magnitudes[3] + magnitudes[4]);
    MESSAGE("H200 decode layer under CUDA graphs: 8 cases, median |error| " << std::lround(1000 * median) / 10.0 << "%," << cases);
    // Where it stands (2026-11-27), with the small-kernel floors scripts/gpu/decode_breakdown.py measured
    // (20% too fast without them). Two misses still cancel here: the breakdown's GEMMs, back to back in the
    // graph, run ~20% faster than the block the model has, and SDPA, one block per sequence and KV head
    // on 132 SMs, 2-3x slower than its bytes at small batches.
    CHECK(median <= 0.08);
    CHECK(magnitudes.back() <= 0.20);
}

TEST_CASE("kernel model: the same decode layer on a real H100, measured the same way") {
    // tests/data/reference/gpu-moe-fp8-decode-h100.json (2026-11-27, one H100 80GB HBM3, 700 W): the
    // chip the kernel model was measured on, so it should be closer than on the H200.
    std::string cases;
    const std::vector<double> magnitudes = sorted_magnitudes(decode_errors("h100", "gpu-moe-fp8-decode-h100.json", cases));
    const double median = 0.5 * (magnitudes[3] + magnitudes[4]);
    MESSAGE("H100 decode layer under CUDA graphs: 8 cases, median |error| " << std::lround(1000 * median) / 10.0 << "%," << cases);
    // Slow since the floors (7% before): its GEMM block, fitted to GEMMs timed one at a time after an L2
    // flush, streams weights at 73% of HBM where the same GEMMs back to back in the graph reach ~85%.
    CHECK(median <= 0.13);
    CHECK(magnitudes.back() <= 0.25);
}

TEST_CASE("kernel model: a decode step's elementwise work costs each kernel's measured floor, not its few bytes") {
    // LLaMA-3 8B at batch 1 moves a few hundred kilobytes of activations a layer: far under any floor, so the
    // elementwise op is the floors of what eager PyTorch launches, read from the chip file: two RMSNorms, two
    // residual adds, the rotation of q and k, and SiLU x up (the projections' epilogues run inside the GEMMs).
    for (const std::string chip : {"h100-sxm", "h200"}) {
        const nlohmann::json floors =
            ridgeline::test::read_json(ridgeline::test::source_dir() / "hardware" / "chips" / (chip + ".json")).at("kernels").at("memory_bound_floor_s");
        const double expected_s = 2 * floors.at("rmsnorm_fwd").get<double>() + 2 * floors.at("residual_add").get<double>() +
                                  floors.at("rope_qk_fwd").get<double>() + floors.at("swiglu_fwd").get<double>();
        const auto result = ridgeline::test::run_ridgeline("roofline --hardware " + chip +
                                                           " --model llama3-8b --phase decode --batch 1 --seq-len 1024 --stack pytorch-eager --json");
        REQUIRE(result.exit_code == 0);
        const nlohmann::json ops = nlohmann::json::parse(result.out).at("ops");
        const nlohmann::json& elementwise = ops.back();
        REQUIRE(elementwise.at("name").get<std::string>().rfind("elementwise", 0) == 0);
        // (the epilogues' few bytes at the copy's rate add under 0.1%)
        CHECK(elementwise.at("predicted_s").get<double>() == doctest::Approx(expected_s).scale(0).epsilon(1e-3));
        // A fused stack launches one kernel per op at the copy's floor (its epilogues' bytes add under 0.2%).
        const auto fused = ridgeline::test::run_ridgeline("roofline --hardware " + chip +
                                                          " --model llama3-8b --phase decode --batch 1 --seq-len 1024 --stack pytorch-compile --json");
        REQUIRE(fused.exit_code == 0);
        CHECK(nlohmann::json::parse(fused.out).at("ops").back().at("predicted_s").get<double>() ==
              doctest::Approx(6 * floors.at("copy").get<double>()).scale(0).epsilon(2e-3));
    }
}
