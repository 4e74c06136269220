// What the cuda backend and PyTorch measured on a real H100 80GB HBM3 and a real H200 (tests/data/gpu/,
// 2026-11-26, scripts/gpu/device-check.sh on lent GPUs), checked on any machine: the backend's own fit
// and held-out GEMMs, the shipped kernel models against each chip, and a whole LLaMA layer's forward
// and backward, rested and held busy. Bounds are the kernel-model issue's: median |error| <= 10%, max <= 25%.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/kernel_fit.hpp"
#include "calibration/measurements.hpp"
#include "engine/roofline.hpp"
#include "hardware/catalog.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

calibration::Measurements calibration_of(const std::string& gpu) {
    return calibration::load_measurements(test::data_file("gpu/" + gpu + "-calibration-2026-11-26.json"));
}

void check_bounds(const std::vector<double>& errors, const std::string& what) {
    REQUIRE_FALSE(errors.empty());
    const double worst = *std::max_element(errors.begin(), errors.end());
    MESSAGE(what << ": " << errors.size() << " cases, median |error| " << 100 * median(errors) << "%, max " << 100 * worst << "%");
    CHECK(median(errors) <= 0.10);
    CHECK(worst <= 0.25);
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

TEST_CASE("cuda backend on a real H100 (two runs) and H200: the GEMMs of the held-out weight shape, predicted by a fit to the others") {
    // The H100's twice, minutes apart on another lent machine: the figure is the backend's, not one run's luck.
    for (const auto& [gpu, chip] : {std::pair{"h100", "h100-sxm"}, std::pair{"h100-rerun", "h100-sxm"}, std::pair{"h200", "h200"}}) {
        const calibration::Measurements m = calibration_of(gpu);
        CHECK(m.provenance.backend == "cuda");
        CHECK(m.provenance.device.find(std::string(chip) == "h200" ? "H200" : "H100") != std::string::npos);
        const ChipSpec datasheet = load_chip_file(test::source_dir() / "hardware" / "chips" / (std::string(chip) + ".json"));
        const auto cases = calibration::predict_held_out_gemms(calibration::kernel_measurements_of(m), datasheet, gpu);
        std::vector<double> errors;
        for (const auto& c : cases) errors.push_back(std::abs(c.error));
        CHECK(errors.size() == 24);  // the 16384 x 16384 weight's bf16 (13 row counts) and fp8 (11) GEMMs
        check_bounds(errors, "cuda backend on a real " + std::string(gpu) + ", held-out GEMMs");
    }
}

TEST_CASE("the shipped H100 kernel model (fitted on PyTorch's GEMMs) predicts the cuda backend's cuBLASLt GEMMs on another H100") {
    const ChipSpec h100 = resolve_hardware("h100-sxm", test::source_dir()).chip;
    int gemm_parts = 0;
    for (const auto& part : calibration::kernel_residuals(calibration::kernel_measurements_of(calibration_of("h100")), h100)) {
        if (part.part.rfind("gemm", 0) != 0) continue;
        ++gemm_parts;
        MESSAGE("shipped H100 kernel model vs the cuda backend, " << part.part << ": " << part.samples << " GEMMs, median |error| "
                                                                 << 100 * part.median_abs << "%, max " << 100 * part.max_abs << "%");
        CHECK(part.samples >= 40);
        CHECK(part.median_abs <= 0.10);
        CHECK(part.max_abs <= 0.25);
    }
    CHECK(gemm_parts == 2);  // bf16 and fp8
}

TEST_CASE("the shipped H200 GEMM block is what ridgeline fit writes from the real H200's measurements") {
    const auto fitted = test::scratch_dir("gpu") / "h200-fitted.json";
    const auto run = test::run_ridgeline("fit " + test::data_file("gpu/h200-calibration-2026-11-26.json").string() + " --like h200 -o " +
                                         fitted.string());
    REQUIRE(run.exit_code == 0);
    const auto written = test::read_json(fitted)["kernels"]["gemm"];
    const auto shipped = test::read_json(test::source_dir() / "hardware" / "chips" / "h200.json")["kernels"]["gemm"];
    CHECK(written["launch_s"].get<double>() == doctest::Approx(shipped["launch_s"].get<double>()).scale(0).epsilon(1e-3));
    CHECK(written["hbm_fraction"].get<double>() == doctest::Approx(shipped["hbm_fraction"].get<double>()).scale(0).epsilon(1e-3));
    for (const char* dtype : {"bf16", "fp8"})
        CHECK(written["dtypes"][dtype]["peak_fraction"].get<double>() ==
              doctest::Approx(shipped["dtypes"][dtype]["peak_fraction"].get<double>()).scale(0).epsilon(1e-3));
}

TEST_CASE("the H200's attention, derived from the H100 die's, against cuDNN and FlashAttention-2 timed on a real H200") {
    const ChipSpec h200 = resolve_hardware("h200", test::source_dir()).chip;
    const auto baseline = test::read_json(test::data_file("gpu/h200-torch-baseline-2026-11-26.json"));
    // The cases are the H100 reference's shapes: 32 query heads, head dim 128, causal.
    const std::vector<double> errors = test::attention_pass_errors(h200, baseline["attention"]);
    CHECK(errors.size() == 12);
    check_bounds(errors, "H200 attention passes, derived model vs real H200");
}

TEST_CASE("a LLaMA layer's forward and backward on a real H100 and H200: the kernel model against the rested chip, and held busy it runs longer") {
  for (const auto& [gpu, chip] : {std::pair{"h100", "h100-sxm"}, std::pair{"h200", "h200"}}) {
    const auto doc = test::read_json(test::data_file("gpu/" + std::string(gpu) + "-sustained-2026-11-26.json"));
    REQUIRE(doc["layers"].size() == 3);
    for (const auto& block : doc["layers"]) {
        // Held busy, the 700 W limit lowers the clock: every shape ran 5-15% longer than rested.
        const double ratio = block["sustained_s"].get<double>() / block["idle_s"].get<double>();
        CHECK(ratio > 1.05);
        CHECK(ratio < 1.15);
        if (block["hidden"] != 4096) continue;  // the 70B block ran without tensor parallelism's sequence sharding
        const double layers = block["layers"];
        const double rested_s = block["idle_s"].get<double>() / layers, busy_s = block["sustained_s"].get<double>() / layers;
        const double predicted_s = layer_s(block, chip);
        MESSAGE(std::string(gpu) << " " << block["name"].get<std::string>() << ": predicted " << 1e3 * predicted_s << " ms, measured " << 1e3 * rested_s
                                                 << " ms rested (" << 100 * (predicted_s / rested_s - 1) << "%), " << 1e3 * busy_s
                                                 << " ms held busy (" << 100 * (predicted_s / busy_s - 1) << "%)");
        // The kernels were measured one at a time from a rested chip, and so is the layer predicted.
        CHECK(std::abs(predicted_s / rested_s - 1.0) <= 0.10);
    }
  }
}
