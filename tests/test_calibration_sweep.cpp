// The calibration sweep's passes and budget, on a scripted backend whose times are set here:
// each sample must keep the fastest of its passes, and a spent budget ends the run early.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "app/fit_chip.hpp"
#include "calibration/sweep.hpp"
#include "hardware/catalog.hpp"
#include "io/safe_write.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using namespace ridgeline::calibration;

namespace {

// Every call returns the next time of `script` (cycling); counts its calls.
class ScriptedBackend final : public Backend {
public:
    explicit ScriptedBackend(std::vector<double> script) : script_(std::move(script)) {}
    [[nodiscard]] std::string name() const override { return "scripted"; }
    [[nodiscard]] int devices() const override { return 2; }
    [[nodiscard]] std::string libraries() const override { return "none"; }
    double gemm_s(std::int64_t, std::int64_t, std::int64_t) override { return next(); }
    double copy_s(double) override { return next(); }
    double collective_s(CollectiveKind, double) override { return next(); }
    double sharded_s(const ShardedCase&) override { return next(); }
    int calls = 0;

private:
    double next() { return script_[static_cast<std::size_t>(calls++) % script_.size()]; }
    std::vector<double> script_;
};

SweepPlan two_gemms_one_case(int passes) {
    SweepPlan plan;
    plan.gemms = {{8, 8, 8}, {16, 16, 16}};
    plan.holdout = {ShardedCase{ShardedKind::local, 4, 4, 4, 0, 2}};
    plan.passes = passes;
    return plan;
}

}  // namespace

TEST_CASE("each sample keeps the fastest time of its passes") {
    // Steps run gemm0, case, gemm1 per pass (interleaved); three passes give each step the times below.
    ScriptedBackend backend({5, 9, 7,  /**/ 3, 8, 9,  /**/ 4, 10, 6});
    int saves = 0;
    const SweepOutcome outcome = run_sweep(backend, two_gemms_one_case(3), Provenance{}, 1e9, nullptr, [&](const Measurements&) { ++saves; });
    CHECK(backend.calls == 9);
    CHECK(saves == 9);
    CHECK(outcome.passes == 3);
    CHECK(outcome.skipped == 0);
    const Measurements& m = outcome.measurements;
    REQUIRE(m.gemms.size() == 2);
    REQUIRE(m.sharded.size() == 1);
    CHECK(m.gemms[0].m == 8);
    CHECK(m.gemms[0].time_s == 3);   // min(5, 3, 4)
    CHECK(m.sharded[0].time_s == 8); // min(9, 8, 10)
    CHECK(m.gemms[1].m == 16);
    CHECK(m.gemms[1].time_s == 6);   // min(7, 9, 6)
}

TEST_CASE("a spent budget skips the rest of the first pass and runs no further passes") {
    ScriptedBackend backend({1});
    const SweepOutcome outcome = run_sweep(backend, two_gemms_one_case(3), Provenance{}, 0.0, nullptr, nullptr);
    CHECK(backend.calls == 0);
    CHECK(outcome.skipped == 3);
    CHECK(outcome.measurements.gemms.empty());
}

TEST_CASE("progress counts the steps of all passes and names the pass") {
    ScriptedBackend backend({1});
    std::vector<StepReport> reports;
    (void)run_sweep(backend, two_gemms_one_case(2), Provenance{}, 1e9, [&](const StepReport& r) { reports.push_back(r); }, nullptr);
    REQUIRE(reports.size() == 6);
    CHECK(reports.front().index == 1);
    CHECK(reports.back().index == 6);
    CHECK(std::all_of(reports.begin(), reports.end(), [](const StepReport& r) { return r.count == 6; }));
    CHECK(reports[3].what.find("(pass 2)") != std::string::npos);
    CHECK(reports[0].what.find("pass") == std::string::npos);
}

namespace {

// A GPU as the cuda backend sees one, its kernel times from a formula worked here: each tensor-core
// GEMM launch + max(FLOPs at a ramping share of the H100 datasheet's peak, bytes at 70% of its HBM),
// each copy at 3 TB/s read plus written. The sweep, the measurements file and the fit run on it
// exactly as on a real GPU.
class FormulaGpu final : public Backend {
public:
    [[nodiscard]] std::string name() const override { return "formula"; }
    [[nodiscard]] int devices() const override { return 1; }
    [[nodiscard]] std::string libraries() const override { return "none"; }
    void describe(Provenance& p) const override {
        p.device = "formula GPU";
        p.memory_bytes = 79e9;
        p.cache_bytes = 50.0 * (1 << 20);
    }
    double gemm_s(std::int64_t m, std::int64_t k, std::int64_t n) override { return 2.0 * static_cast<double>(m * k * n) / 50e12 + 1e-5; }
    double copy_s(double bytes) override { return 2 * bytes / 3e12; }
    double collective_s(CollectiveKind, double) override { return 1e-3; }
    double sharded_s(const ShardedCase&) override { return 1e-3; }
    [[nodiscard]] std::vector<Dtype> tensor_dtypes() const override { return {Dtype::bf16, Dtype::fp8}; }
    double tensor_gemm_s(Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n) override {
        const bool fp8 = dtype == Dtype::fp8;
        const double rows = static_cast<double>(m), width = fp8 ? 1.0 : 2.0;
        const double rate = (fp8 ? 1979e12 * 0.7 : 989e12 * 0.8) * rows / (rows + (fp8 ? 15.0 : 40.0));
        const double bytes = (rows * static_cast<double>(k) + rows * static_cast<double>(n) + static_cast<double>(k * n)) * width;
        return 6e-6 + std::max(2.0 * rows * static_cast<double>(k * n) / rate, bytes / (3.35e12 * 0.7));
    }
};

}  // namespace

TEST_CASE("a GPU's tensor-core GEMMs at LLM shapes go from the sweep through the file to a kernel model") {
    FormulaGpu gpu;
    Provenance provenance = host_provenance();
    provenance.backend = gpu.name();
    provenance.devices = gpu.devices();
    provenance.libraries = gpu.libraries();
    gpu.describe(provenance);
    const SweepPlan plan = make_plan(1, false, false, gpu.tensor_dtypes());
    // Skinny decode rows through 16k-row micro-batches, up to 16k x 28k weights, in each dtype.
    // bf16 from one row; fp8 from 16 (cuBLASLt's fp8 kernels take rows in multiples of 16).
    CHECK(plan.tensor_gemms.size() == (13 + 11) * 4);
    CHECK(std::any_of(plan.tensor_gemms.begin(), plan.tensor_gemms.end(), [](const KernelGemmSample& g) { return g.m == 1; }));
    CHECK(std::any_of(plan.tensor_gemms.begin(), plan.tensor_gemms.end(),
                      [](const KernelGemmSample& g) { return g.m == 16384 && std::max(g.k, g.n) == 28672; }));
    const SweepOutcome outcome = run_sweep(gpu, plan, provenance, 1e9, nullptr, nullptr);
    CHECK(outcome.measurements.kernels.gemms.size() == plan.tensor_gemms.size());

    const auto path = test::scratch_dir("formula_gpu") / "gpu.json";
    io::write_file_atomically(path, measurements_json(outcome.measurements));
    const Measurements back = load_measurements(path);
    REQUIRE(back.kernels.gemms.size() == plan.tensor_gemms.size());
    CHECK(back.provenance.device == "formula GPU");
    const KernelMeasurements kernels = kernel_measurements_of(back);
    // Only the copies beyond four L2s (the 256 MiB one) stream from memory.
    REQUIRE(kernels.copy_Bps.size() == 1);
    CHECK(kernels.copy_Bps.front() == doctest::Approx(3e12));

    app::FitRequest request{path, test::scratch_dir("formula_gpu") / "chip.json", "formula-h100", "h100-sxm", ""};
    const app::FitOutcome fitted = app::fit_chip(request, test::source_dir());
    const ChipSpec& chip = fitted.hardware.chip;
    REQUIRE(chip.kernels.has_value());
    CHECK(chip.kernels->gemm_launch_s == doctest::Approx(6e-6).scale(0).epsilon(0.03));
    CHECK(chip.kernels->gemm_hbm_fraction == doctest::Approx(0.7).scale(0).epsilon(0.02));
    CHECK(chip.kernels->gemm[index_of(Dtype::bf16)]->peak_fraction == doctest::Approx(0.8).scale(0).epsilon(0.02));
    CHECK(chip.kernels->gemm[index_of(Dtype::fp8)]->peak_fraction == doctest::Approx(0.7).scale(0).epsilon(0.02));
    CHECK(chip.hbm_bytes == doctest::Approx(79e9));  // the device's memory, not the datasheet's 80 GB
    // Attention was not measured here: the datasheet chip's measured families stay.
    CHECK(chip.kernels->attention.size() == resolve_hardware("h100-sxm", test::source_dir()).chip.kernels->attention.size());
    REQUIRE(fitted.hardware.system.has_value());
    CHECK(fitted.hardware.system->name == "dgx-h100");

    // calibrate --validate on a GPU: the last weight shape (16k x 16k) predicted from the other three.
    const auto cases = predict_held_out_gemms(kernels, resolve_hardware("h100-sxm", test::source_dir()).chip, "gpu.json");
    CHECK(cases.size() == 13 + 11);
    for (const auto& c : cases) {
        CAPTURE(c.name);
        CHECK(c.name.find("x16384x16384") != std::string::npos);
        CHECK(std::abs(c.error) < 0.02);  // the formula is the model's own form: only the fit's tolerance remains
    }
}
