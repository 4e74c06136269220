// Stragglers: synchronous training waits for the slowest rank. The expected maximum of N standard
// normals is checked against Harter's published table (1961, "Expected values of normal order
// statistics", Biometrika 48); the step's share is worked by hand from the report's own parts.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/stragglers.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

// A shipped stack file (megatron-core unless named) with its ranks' step times varying by `cv`.
std::string stack_with_cv(double cv, const std::string& base = "megatron-core") {
    nlohmann::json stack = test::read_json(test::source_dir() / "stacks" / (base + ".json"));
    stack["name"] = base + "-cv";
    stack["aliases"] = nlohmann::json::array();
    stack["fitted"]["rank_time_cv"] = cv;
    const auto path = test::scratch_dir("stragglers") / (base + "-cv" + std::to_string(cv) + ".json");
    std::ofstream(path) << stack.dump();
    return path.string();
}

}  // namespace

TEST_CASE("stragglers: the expected maximum of N standard normals, against Harter's table") {
    CHECK(expected_max_standard_normal(1) == 0.0);
    CHECK(expected_max_standard_normal(2) == doctest::Approx(1.0 / std::sqrt(M_PI)).scale(0).epsilon(1e-5));  // exactly 1/sqrt(pi)
    CHECK(expected_max_standard_normal(10) == doctest::Approx(1.53875).scale(0).epsilon(1e-5));
    CHECK(expected_max_standard_normal(100) == doctest::Approx(2.50759).scale(0).epsilon(1e-5));
    CHECK(expected_max_standard_normal(1000) == doctest::Approx(3.24144).scale(0).epsilon(1e-5));
    CHECK(straggler_fraction(1000, 0.02) == doctest::Approx(0.02 * 3.24144).scale(0).epsilon(1e-5));
    CHECK(straggler_fraction(1000, 0) == 0.0);
}

TEST_CASE("stragglers: the step waits cv x E[max of N] of the rest, and only that") {
    const std::string job = "--model llama3-70b --hardware dgx-h100 --chips 1000 --tp 8 --pp 5 --global-batch-seqs 2000 ";
    const nlohmann::json still = test::train_json(job + "--stack " + stack_with_cv(0.0));
    const nlohmann::json varying = test::train_json(job + "--stack " + stack_with_cv(0.02));
    CHECK(test::step_part_s(still, "waiting for the slowest rank") == 0.0);
    // 1,000 ranks: E[max] = 3.24144 (Harter's table); the rest of the step is what the report
    // without variation shows.
    const double rest_s = still.at("step_time_s").get<double>();
    const double wait_s = test::step_part_s(varying, "waiting for the slowest rank");
    CHECK(wait_s == doctest::Approx(0.02 * 3.24144 * rest_s).scale(0).epsilon(1e-5));
    CHECK(varying.at("step_time_s").get<double>() == doctest::Approx(rest_s + wait_s).scale(0).epsilon(1e-12));
}

TEST_CASE("stragglers: at a fixed batch per chip, MFU never rises with the chip count") {
    const std::string stack = stack_with_cv(0.02);
    double previous_mfu = 1.0;
    for (int chips = 256; chips <= 16384; chips *= 2) {
        // tp 8, pp 4: 32 chips a replica, 8 sequences per replica.
        const nlohmann::json report = test::train_json("--model llama3-70b --hardware dgx-h100 --chips " + std::to_string(chips) +
                                            " --tp 8 --pp 4 --global-batch-seqs " + std::to_string(chips / 4) + " --stack " + stack);
        const double mfu = report.at("mfu").get<double>();
        CAPTURE(chips);
        CHECK(mfu <= previous_mfu);
        previous_mfu = mfu;
    }
}

TEST_CASE("stragglers: a deterministic chip's ranks wait only across slices, as many ranks as there are slices") {
    // The same job on TPU v5p (its chip file: deterministic, Jouppi et al. 2017) and on H100s.
    const std::string job = "--model llama3-8b --chips 1024 --global-batch-seqs 1024 --stack " + stack_with_cv(0.02, "maxtext");
    // 1,024 v5p chips are one slice (a v5p pod holds 8,960): nobody waits.
    CHECK(test::step_part_s(test::train_json(job + " --hardware tpu-v5p"), "waiting for the slowest rank") == 0.0);
    // 1,024 v5e chips are four 256-chip slices over DCN: four ranks wait, cv x E[max of 4] = 0.02 x 1.0294
    // (Harter's table) of the rest.
    const nlohmann::json slices = test::train_json(job + " --hardware tpu-v5e");
    const double slices_wait_s = test::step_part_s(slices, "waiting for the slowest rank");
    CHECK(slices_wait_s == doctest::Approx(0.02 * 1.0294 * (slices.at("step_time_s").get<double>() - slices_wait_s)).epsilon(1e-3));
    const nlohmann::json gpu = test::train_json(job + " --hardware dgx-h100");
    const double wait_s = test::step_part_s(gpu, "waiting for the slowest rank");
    // 1,024 ranks wait cv x E[max of 1,024] (held against Harter's table above) of the rest.
    CHECK(wait_s > 0.0);
    CHECK(wait_s == doctest::Approx(straggler_fraction(1024, 0.02) * (gpu.at("step_time_s").get<double>() - wait_s)).scale(0).epsilon(1e-6));
}
