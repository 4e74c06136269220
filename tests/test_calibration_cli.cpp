// `ridgeline calibrate` and `ridgeline fit` end to end: a short real calibration on this host,
// the fitted description loaded by another command, and bad input refused with exit code 2.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using nlohmann::json;
using ridgeline::test::read_json;
using ridgeline::test::run_ridgeline;

namespace {

std::filesystem::path scratch() { return ridgeline::test::scratch_dir("calib_cli"); }

// Enough for the first GEMM sizes and six held-out cases on both device counts on this 2-core
// machine; a sanitized binary measures each step several times slower (about 1.5 s a step here,
// a held-out case every fourth step: 60 s gave 12 cases).
#ifdef RIDGELINE_SANITIZED
constexpr const char* kBudget = "60";
#else
constexpr const char* kBudget = "12";
#endif

}  // namespace

// Timed on this machine: ctest runs it alone (calibrate_validate_timing, RUN_SERIAL), not beside other tests.
TEST_CASE("calibrate --validate measures, fits and predicts held-out cases on 1 and 2 devices" * doctest::skip()) {
    const auto out = scratch() / "cpu.json";
    const auto result = run_ridgeline(std::string("calibrate --backend cpu --devices 2 --time-budget ") + kBudget + " --validate --json -o " + out.string());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.err.find("[1/") != std::string::npos);  // progress on stderr
    const json doc = json::parse(result.out);
    CHECK(doc["schema"] == "ridgeline.calibration-validation/1");
    const json& cases = doc["cases"];
    REQUIRE(cases.size() >= 6);
    std::set<int> devices;
    std::set<std::string> bounds;
    for (const json& c : cases) {
        devices.insert(c["devices"].get<int>());
        bounds.insert(c["bound"].get<std::string>());
        CHECK(c["backend"] == "cpu");
        CHECK(c["measured_s"].get<double>() > 0);
        CHECK(c["predicted_s"].get<double>() > 0);
        const double error = (c["predicted_s"].get<double>() - c["measured_s"].get<double>()) / c["measured_s"].get<double>();
        CHECK(c["error"].get<double>() == doctest::Approx(error));
    }
    CHECK(devices == std::set<int>{1, 2});
    CHECK(bounds.count("compute") == 1);
    // A short run on a shared 2-core machine: a loose bound (the benchmark script checks 10% / 25%).
    CAPTURE(result.out);
    CHECK(doc["summary"]["count"].get<std::size_t>() == cases.size());
    CHECK(doc["summary"]["median_abs_error"].get<double>() < 0.5);

    // The measurements file is complete, with provenance, and the fitted chip loads elsewhere.
    const json measurements = read_json(out);
    CHECK(measurements["schema"] == "ridgeline.calibration/1");
    CHECK(measurements["provenance"]["backend"] == "cpu");
    CHECK(measurements["provenance"]["devices"] == 2);
    CHECK(!measurements["provenance"]["cpu_model"].get<std::string>().empty());
    const auto chip = scratch() / "fitted.json";
    const auto fit = run_ridgeline("fit " + out.string() + " -o " + chip.string() + " --name my-host --system dgx-h100");
    INFO(fit.err);
    REQUIRE(fit.exit_code == 0);
    CHECK(fit.out.find("residual") != std::string::npos);
    const json chip_doc = read_json(chip);
    CHECK(chip_doc["schema"] == "ridgeline.chip/1");
    CHECK(chip_doc["peak_flops_per_s"]["fp32"]["source"].get<std::string>().find("fitted") != std::string::npos);
    const auto inside = run_ridgeline("roofline --hardware " + chip.string() + " --matmul 256,256,256 --dtype fp32");
    INFO(inside.err);
    CHECK(inside.exit_code == 0);
    CHECK(inside.err.find("warning") == std::string::npos);
    const auto outside = run_ridgeline("roofline --hardware " + chip.string() + " --matmul 65536,65536,65536 --dtype fp32");
    CHECK(outside.exit_code == 0);
    CHECK(outside.err.find("warning") != std::string::npos);
    // Placed in a system, the fitted host trains (before --system: "no system description").
    const auto train = run_ridgeline("train --model llama3-8b --hardware " + chip.string() + " --chips 2 --tp 2 --global-batch-tokens 16384 --seq-len 2048");
    INFO(train.err);
    CHECK(train.exit_code == 0);
    CHECK(train.out.find("my-host (dgx-h100)") != std::string::npos);
}

TEST_CASE("fit --like gives a shipped chip a measured kernel model that roofline and train use") {
    const auto reference = ridgeline::test::data_file("reference/gpu-kernels-h100.json");
    const auto chip = scratch() / "my-h100.json";
    const auto fit = run_ridgeline("fit " + reference.string() + " --like h100-sxm --system dgx-h100 --name my-h100 -o " + chip.string());
    INFO(fit.err);
    REQUIRE(fit.exit_code == 0);
    CHECK(fit.out.find("attention cudnn forward") != std::string::npos);
    const json doc = read_json(chip);
    CHECK(doc["name"] == "my-h100");
    CHECK(doc["default_system"] == "dgx-h100");
    CHECK(doc["kernels"]["gemm"]["source"].get<std::string>().find("ridgeline fit") != std::string::npos);
    // The written chip predicts a measured GEMM: bf16 4096^3 took 0.17872 ms on the H100.
    const auto roofline = run_ridgeline("roofline --hardware " + chip.string() + " --matmul 4096,4096,4096 --json");
    INFO(roofline.err);
    REQUIRE(roofline.exit_code == 0);
    CHECK(json::parse(roofline.out)["predicted_s"].get<double>() == doctest::Approx(0.17872e-3).scale(0).epsilon(0.10));
    const auto train = run_ridgeline("train --model llama3-8b --hardware " + chip.string() + " --chips 8 --tp 8 --global-batch-tokens 1048576");
    INFO(train.err);
    CHECK(train.exit_code == 0);
    CHECK(train.out.find("my-h100 (dgx-h100)") != std::string::npos);

    // Refused, naming the flag, with nothing written.
    const auto missing = scratch() / "never.json";
    for (const auto& refusal : {std::pair{std::string(""), "--like"}, std::pair{std::string("--like no-such-chip"), "--like"},
                                std::pair{std::string("--like h100-sxm --system no-such-system"), "--system"}}) {
        const auto refused = run_ridgeline("fit " + reference.string() + " " + refusal.first + " -o " + missing.string());
        CAPTURE(refusal.first);
        CHECK(refused.exit_code == 2);
        CHECK(refused.err.find(refusal.second) != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(missing));
    }
}

TEST_CASE("calibrate and fit refuse bad input with exit code 2, naming the flag or file and field") {
    const auto unknown = run_ridgeline("calibrate --backend tpu --quiet -o " + (scratch() / "x.json").string());
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("--backend") != std::string::npos);
    const auto too_many = run_ridgeline("calibrate --backend cpu --devices 4096 --quiet -o " + (scratch() / "x.json").string());
    CHECK(too_many.exit_code == 2);
    CHECK(too_many.err.find("--devices") != std::string::npos);
    // No GPU here (or no CUDA in this build): a clear error either way, never a crash.
    const auto cuda = run_ridgeline("calibrate --backend cuda --quiet -o " + (scratch() / "x.json").string());
    if (cuda.exit_code != 0) {
        CHECK(cuda.exit_code == 2);
        CHECK(cuda.err.find("--backend") != std::string::npos);
    }
    // An existing result is never replaced without --force, and the refusal comes before any measuring.
    const auto existing = scratch() / "existing.json";
    std::ofstream(existing) << "{\"keep\": true}";
    const auto refused = run_ridgeline("calibrate --backend cpu --quiet --time-budget 1 -o " + existing.string());
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("--force") != std::string::npos);
    CHECK(read_json(existing)["keep"] == true);
    const auto bad = scratch() / "bad.json";
    std::ofstream(bad) << R"({"schema": "ridgeline.calibration/1", "provenance": {"host": "h", "cpu_model": "c", "cores": 2,
      "memory_bytes": 1e9, "cache_bytes": 1e6, "libraries": "l", "date": "d", "backend": "cpu", "devices": 2},
      "gemms": [{"m": 64, "k": 64, "n": 64, "time_s": -1}], "copies": [], "collectives": [], "sharded": []})";
    const auto fit = run_ridgeline("fit " + bad.string() + " -o " + (scratch() / "y.json").string());
    CHECK(fit.exit_code == 2);
    CHECK(fit.err.find("bad.json") != std::string::npos);
    CHECK(fit.err.find("gemms[0].time_s") != std::string::npos);
    std::filesystem::remove_all(scratch());
}
