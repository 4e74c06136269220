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
    // Where it stands (2026-11-26): too fast at small batches, where the layer's many small kernels and
    // the GEMMs streaming weights at one to eight rows fall short of the copy rate the model gives them.
    CHECK(median <= 0.25);
    CHECK(magnitudes.back() <= 0.40);
}

TEST_CASE("kernel model: the same decode layer on a real H100, measured the same way") {
    // tests/data/reference/gpu-moe-fp8-decode-h100.json (2026-11-27, one H100 80GB HBM3, 700 W): the
    // chip the kernel model was measured on, so it should be closer than on the H200.
    std::string cases;
    const std::vector<double> magnitudes = sorted_magnitudes(decode_errors("h100", "gpu-moe-fp8-decode-h100.json", cases));
    const double median = 0.5 * (magnitudes[3] + magnitudes[4]);
    MESSAGE("H100 decode layer under CUDA graphs: 8 cases, median |error| " << std::lround(1000 * median) / 10.0 << "%," << cases);
    CHECK(median <= 0.12);
    CHECK(magnitudes.back() <= 0.25);
}
