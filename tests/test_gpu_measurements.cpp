// What the cuda backend and PyTorch measured on a real H100 80GB HBM3 (tests/data/gpu/, 2026-11-26,
// scripts/gpu/device-check.sh and torch_sustained.py on a lent GPU), checked on any machine: the
// backend's own fit and held-out GEMMs, the shipped kernel model against that chip, and a whole
// LLaMA layer's forward and backward, rested and held busy.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/kernel_fit.hpp"
#include "calibration/measurements.hpp"
#include "hardware/catalog.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

calibration::Measurements h100_calibration() {
    return calibration::load_measurements(test::data_file("gpu/h100-calibration-2026-11-26.json"));
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One layer's forward + backward as `train --json` prices it for a block of the sustained run.
double layer_s(const nlohmann::json& block, const std::string& hardware) {
    const std::string model = block["hidden"] == 4096 ? "llama-3-8b" : "llama-3-70b";
    const auto run = test::run_ridgeline("train --model " + model + " --hardware " + hardware + " --chips 8 --seq-len " +
                                         std::to_string(block["seq"].get<int>()) + " --global-batch-seqs 8 --micro-batch 1 --stack " +
                                         test::data_file("gpu/pytorch-eager-cudnn.stack.json").string() + " --json");
    REQUIRE(run.exit_code == 0);
    const auto doc = nlohmann::json::parse(run.out);
    return doc["per_layer"]["forward_s"].get<double>() + doc["per_layer"]["backward_s"].get<double>();
}

}  // namespace

TEST_CASE("cuda backend on a real H100: the GEMMs of the held-out weight shape, predicted by a fit to the others") {
    const calibration::Measurements m = h100_calibration();
    CHECK(m.provenance.backend == "cuda");
    CHECK(m.provenance.device.find("H100") != std::string::npos);
    const ChipSpec datasheet = load_chip_file(test::source_dir() / "hardware" / "chips" / "h100-sxm.json");
    const auto cases = calibration::predict_held_out_gemms(calibration::kernel_measurements_of(m), datasheet, "h100 calibration");
    std::vector<double> errors;
    for (const auto& c : cases) errors.push_back(std::abs(c.error));
    // The 16384 x 16384 weight's bf16 (13 row counts) and fp8 (11) GEMMs.
    REQUIRE(errors.size() == 24);
    MESSAGE("cuda backend on a real H100, held-out GEMMs: median |error| " << 100 * median(errors) << "%, max " << 100 * *std::max_element(errors.begin(), errors.end()) << "%");
    CHECK(median(errors) <= 0.06);
    CHECK(*std::max_element(errors.begin(), errors.end()) <= 0.12);
}

TEST_CASE("the shipped H100 kernel model (fitted on PyTorch's GEMMs) predicts the cuda backend's cuBLASLt GEMMs on another H100") {
    const ChipSpec h100 = resolve_hardware("h100-sxm", test::source_dir()).chip;
    const auto parts = calibration::kernel_residuals(calibration::kernel_measurements_of(h100_calibration()), h100);
    int gemm_parts = 0;
    for (const auto& part : parts) {
        if (part.part.rfind("gemm", 0) != 0) continue;
        ++gemm_parts;
        MESSAGE("shipped H100 kernel model vs the cuda backend, " << part.part << ": " << part.samples << " GEMMs, median |error| " << 100 * part.median_abs << "%, max " << 100 * part.max_abs << "%");
        CHECK(part.samples >= 40);
        CHECK(part.median_abs <= 0.10);
        CHECK(part.max_abs <= 0.25);
    }
    CHECK(gemm_parts == 2);  // bf16 and fp8
}

TEST_CASE("a LLaMA layer's forward and backward on a real H100: the kernel model against the rested chip, and held busy it runs longer") {
    const auto doc = test::read_json(test::data_file("gpu/h100-sustained-2026-11-26.json"));
    REQUIRE(doc["layers"].size() == 3);
    for (const auto& block : doc["layers"]) {
        // Held busy, the 700 W limit lowers the clock: every shape ran 5-15% longer than rested.
        const double ratio = block["sustained_s"].get<double>() / block["idle_s"].get<double>();
        CHECK(ratio > 1.05);
        CHECK(ratio < 1.15);
        if (block["hidden"] != 4096) continue;  // the 70B block ran without tensor parallelism's sequence sharding
        const double layers = block["layers"];
        const double rested_s = block["idle_s"].get<double>() / layers, busy_s = block["sustained_s"].get<double>() / layers;
        const double predicted_s = layer_s(block, "h100-sxm");
        MESSAGE(block["name"].get<std::string>() << ": predicted " << 1e3 * predicted_s << " ms, measured " << 1e3 * rested_s
                                                 << " ms rested (" << 100 * (predicted_s / rested_s - 1) << "%), " << 1e3 * busy_s
                                                 << " ms held busy (" << 100 * (predicted_s / busy_s - 1) << "%)");
        // The kernels were measured one at a time from a rested chip, and so is the layer predicted.
        CHECK(std::abs(predicted_s / rested_s - 1.0) <= 0.10);
    }
}
