// Fitting a kernel model to kernel measurements (calibration/kernel_fit, `ridgeline fit --like`):
// the fit recovers parameters that generated times by a formula worked here, the model it fits
// predicts the real H100's kernels (tests/data/reference/gpu-kernels-h100.json) within the
// issue's bounds, and bad measurements are refused naming the file and field.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/kernel_fit.hpp"
#include "core/error.hpp"
#include "engine/roofline.hpp"
#include "hardware/catalog.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using namespace ridgeline::calibration;

namespace {

ChipSpec h100_datasheet() {
    ChipSpec chip = resolve_hardware("h100-sxm", test::source_dir()).chip;
    chip.kernels.reset();  // the fit must not see the shipped model
    return chip;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::filesystem::path write_file(const std::string& name, const nlohmann::json& doc) {
    const auto path = test::scratch_dir("kernel_fit") / name;
    std::ofstream(path) << doc.dump(2);
    return path;
}

}  // namespace

TEST_CASE("kernel fit: recovers the launch cost, weight streaming and per-dtype ramp that generated the times") {
    const ChipSpec chip = h100_datasheet();
    const double peak_bf16 = 989e12, peak_fp8 = 1979e12, hbm = 3.35e12;  // the datasheet's (h100-sxm.json)
    const double launch = 6e-6, hbm_share = 0.7, f_bf16 = 0.8, h_bf16 = 40, f_fp8 = 0.7, h_fp8 = 15;
    KernelMeasurements m;
    m.device = "synthetic";
    for (const std::string dtype : {"bf16", "fp8"})
        for (double rows : {1.0, 8.0, 64.0, 512.0, 4096.0, 16384.0})
            for (auto [k, n] : {std::pair{4096.0, 4096.0}, std::pair{8192.0, 28672.0}}) {
                const bool fp8 = dtype == "fp8";
                const double width = fp8 ? 1.0 : 2.0;
                const double rate = (fp8 ? peak_fp8 * f_fp8 : peak_bf16 * f_bf16) * rows / (rows + (fp8 ? h_fp8 : h_bf16));
                const double compute = 2 * rows * k * n / rate;
                const double traffic = (rows * k + rows * n + k * n) * width / (hbm * hbm_share);
                m.gemms.push_back({fp8 ? Dtype::fp8 : Dtype::bf16, static_cast<std::int64_t>(rows), static_cast<std::int64_t>(k),
                                   static_cast<std::int64_t>(n), launch + std::max(compute, traffic)});
            }
    const KernelFit fit = fit_kernels(m, chip, "synthetic.json");
    CHECK(fit.model.gemm_launch_s == doctest::Approx(launch).scale(0).epsilon(0.03));
    CHECK(fit.model.gemm_hbm_fraction == doctest::Approx(hbm_share).scale(0).epsilon(0.02));
    CHECK(fit.model.gemm[index_of(Dtype::bf16)]->peak_fraction == doctest::Approx(f_bf16).scale(0).epsilon(0.02));
    CHECK(fit.model.gemm[index_of(Dtype::bf16)]->half_rows == doctest::Approx(h_bf16).scale(0).epsilon(0.1));
    CHECK(fit.model.gemm[index_of(Dtype::fp8)]->peak_fraction == doctest::Approx(f_fp8).scale(0).epsilon(0.02));
    CHECK(fit.model.gemm[index_of(Dtype::fp8)]->half_rows == doctest::Approx(h_fp8).scale(0).epsilon(0.15));
    CHECK_FALSE(fit.model.gemm[index_of(Dtype::fp32)].has_value());
}

TEST_CASE("kernel fit: the model fitted to the real H100's kernels predicts each of them (median <= 10%, max <= 25%)") {
    const auto reference = test::data_file("reference/gpu-kernels-h100.json");
    const nlohmann::json doc = test::read_json(reference);
    ChipSpec chip = h100_datasheet();
    chip.kernels = fit_kernels(load_kernel_measurements(reference), chip, reference.string()).model;

    std::vector<double> gemm_errors, attention_errors;
    for (const auto& g : doc["gemm"]) {
        const double m = g["M"], k = g["K"], n = g["N"];
        const Dtype dtype = g["dtype"].get<std::string>().rfind("fp8", 0) == 0 ? Dtype::fp8 : Dtype::bf16;
        gemm_errors.push_back(std::abs(gemm_time(chip, {m, k, n, 1, k * n}, {dtype, dtype, dtype}).lower_bound_s() / g["seconds"].get<double>() - 1));
    }
    for (const auto& a : doc["attention"]) {
        const double s = a["seq"];
        // QK^T and AV under a causal mask: 4 B H S^2 D / 2; the backward pass does 2.5x that.
        const double forward_flops = 4.0 * a["batch"].get<double>() * a["q_heads"].get<double>() * s * s * a["head_dim"].get<double>() / 2;
        const double forward_s = a["forward_s"], backward_s = a["forward_backward_s"].get<double>() - forward_s;
        const std::string family = a["kernel"];
        attention_errors.push_back(std::abs(attention_time(chip, family, AttentionPassKind::forward, forward_flops, 0, s).lower_bound_s() / forward_s - 1));
        attention_errors.push_back(std::abs(attention_time(chip, family, AttentionPassKind::backward, 2.5 * forward_flops, 0, s).lower_bound_s() / backward_s - 1));
    }
    REQUIRE(gemm_errors.size() == 40);
    REQUIRE(attention_errors.size() == 12);
    for (const auto* errors : {&gemm_errors, &attention_errors}) {
        MESSAGE("median " << 100 * median(*errors) << "%, max " << 100 * *std::max_element(errors->begin(), errors->end()) << "%");
        CHECK(median(*errors) <= 0.10);
        CHECK(*std::max_element(errors->begin(), errors->end()) <= 0.25);
    }
    // Memory-bound kernels: the median of the measured rates over the datasheet's 3.35 TB/s.
    std::vector<double> rmsnorm;
    for (const auto& k : doc["memory_bound"])
        if (k["kernel"] == "rmsnorm_fwd") rmsnorm.push_back(k["bytes"].get<double>() / k["seconds"].get<double>());
    REQUIRE_FALSE(rmsnorm.empty());
    CHECK(memory_bound_s(chip, "rmsnorm_fwd", 1e9) == doctest::Approx(1e9 / median(rmsnorm)).scale(0).epsilon(1e-9));
    const auto& copies = doc["copy"]["bytes_moved_per_s_read_plus_write"];
    CHECK(memory_bound_s(chip, "copy", 1e9) == doctest::Approx(1e9 / (0.5 * (copies[0].get<double>() + copies[1].get<double>()))).scale(0).epsilon(1e-9));
}

TEST_CASE("kernel fit: measurements the datasheet cannot hold, or that contradict themselves, are refused by field") {
    nlohmann::json doc = test::read_json(test::data_file("reference/gpu-kernels-h100.json"));
    ChipSpec no_fp8 = h100_datasheet();
    no_fp8.peak_flops_per_s[index_of(Dtype::fp8)] = 0;
    const auto reference = test::data_file("reference/gpu-kernels-h100.json");
    CHECK_THROWS_WITH_AS((void)fit_kernels(load_kernel_measurements(reference), no_fp8, "ref.json"),
                         doctest::Contains("no peak for that dtype"), InputError);

    nlohmann::json heads = doc;
    heads["attention"][0]["kv_heads"] = 64;
    CHECK_THROWS_WITH_AS((void)load_kernel_measurements(write_file("heads.json", heads)), doctest::Contains("attention[0].kv_heads"), InputError);
    nlohmann::json dtype = doc;
    dtype["gemm"][3]["dtype"] = "bf17";
    CHECK_THROWS_WITH_AS((void)load_kernel_measurements(write_file("dtype.json", dtype)), doctest::Contains("gemm[3].dtype"), InputError);
    nlohmann::json negative = doc;
    negative["gemm"][0]["seconds"] = -1e-5;
    CHECK_THROWS_WITH_AS((void)load_kernel_measurements(write_file("negative.json", negative)), doctest::Contains("gemm[0].seconds"), InputError);
    nlohmann::json backwards = doc;
    backwards["attention"][1]["forward_backward_s"] = backwards["attention"][1]["forward_s"];
    CHECK_THROWS_WITH_AS((void)load_kernel_measurements(write_file("backwards.json", backwards)),
                         doctest::Contains("attention[1].forward_backward_s"), InputError);
    // A copy faster than the datasheet's HBM: the wrong chip named.
    nlohmann::json fast = doc;
    fast["copy"]["bytes_moved_per_s_read_plus_write"] = {9e12};
    CHECK_THROWS_WITH_AS((void)fit_kernels(load_kernel_measurements(write_file("fast.json", fast)), h100_datasheet(), "fast.json"),
                         doctest::Contains("right chip"), InputError);
}

TEST_CASE("kernel fit: the shipped H100 kernel block is what ridgeline fit writes from the reference") {
    const auto reference = test::data_file("reference/gpu-kernels-h100.json");
    const KernelModel fitted = fit_kernels(load_kernel_measurements(reference), h100_datasheet(), reference.string()).model;
    const KernelModel shipped = *resolve_hardware("h100-sxm", test::source_dir()).chip.kernels;
    // The file holds four significant digits.
    const auto same = [](double a, double b) { return std::abs(a / b - 1) < 6e-4; };
    CHECK(same(fitted.gemm_launch_s, shipped.gemm_launch_s));
    CHECK(same(fitted.gemm_hbm_fraction, shipped.gemm_hbm_fraction));
    for (Dtype dtype : {Dtype::bf16, Dtype::fp8}) {
        CHECK(same(fitted.gemm[index_of(dtype)]->peak_fraction, shipped.gemm[index_of(dtype)]->peak_fraction));
        CHECK(same(fitted.gemm[index_of(dtype)]->half_rows, shipped.gemm[index_of(dtype)]->half_rows));
    }
    // Each measured family; the shipped block adds families derived from them (scripts/derive_kernels.py).
    REQUIRE(fitted.attention.size() == 2);
    for (const AttentionFamily& f : fitted.attention) {
        const auto it = std::find_if(shipped.attention.begin(), shipped.attention.end(), [&](const AttentionFamily& s) { return s.name == f.name; });
        REQUIRE(it != shipped.attention.end());
        CHECK(same(f.forward.peak_fraction, it->forward.peak_fraction));
        CHECK(same(f.forward.half_seq, it->forward.half_seq));
        CHECK(same(f.backward.peak_fraction, it->backward.peak_fraction));
        CHECK(same(f.backward.half_seq, it->backward.half_seq));
    }
    CHECK(fitted.memory_bound.size() == shipped.memory_bound.size());
}
