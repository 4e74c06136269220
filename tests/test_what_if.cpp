// What-if settings (`--set PATH=VALUE`, `--price`): each replaces one figure of the chip or system
// before anything is built from it, is echoed in the report, and bad settings are refused naming
// the path. Expected values are the closed forms worked here from the datasheet figures.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/stragglers.hpp"
#include "test_support.hpp"

using nlohmann::json;
using ridgeline::test::expect_refusal;
using ridgeline::test::run_ridgeline;

namespace {

json run_json(const std::string& arguments) {
    const auto result = run_ridgeline(arguments + " --json");
    CAPTURE(arguments);
    CAPTURE(result.err);
    REQUIRE(result.exit_code == 0);
    return json::parse(result.out);
}

}  // namespace

TEST_CASE("--set: an all-reduce over one DGX H100's NVLink at twice the bandwidth takes half the bandwidth time") {
    // Ring all-reduce over 8 GPUs: 2 x 7/8 x 1 GB through each GPU's egress (450 GB/s one way).
    const std::string base = "collective --hardware dgx-h100 --op allreduce --bytes 1GB";
    const json datasheet = run_json(base);
    const json doubled = run_json(base + " --set chip.nvlink.bandwidth=900GB/s");
    CHECK(datasheet["bandwidth_s"].get<double>() == doctest::Approx(2.0 * 7.0 / 8.0 * 1e9 / 450e9));
    CHECK(doubled["bandwidth_s"].get<double>() == doctest::Approx(2.0 * 7.0 / 8.0 * 1e9 / 900e9));
    REQUIRE(doubled["overrides"].size() == 1);
    CHECK(doubled["overrides"][0]["path"] == "chip.interconnect.nvlink.bw_per_chip_Bps_one_way");
    CHECK(doubled["overrides"][0]["value"].get<double>() == doctest::Approx(900e9));
    CHECK(doubled["overrides"][0]["was"].get<double>() == doctest::Approx(450e9));
    CHECK(datasheet.find("overrides") == datasheet.end());
}

TEST_CASE("--set: the HBM ridge point moves with the bandwidth and the peak, in any unit") {
    // H100 SXM bf16: 989 TFLOP/s over 3.35 TB/s; over 4.945 TB/s it is 200 FLOP/byte, and a 2 PFLOP/s
    // peak over 4 TB/s (given in bits: 32 Tb/s) is 500.
    const auto hbm_ridge = [](const json& doc) {
        for (const auto& point : doc["ridge_points"])
            if (point["level"] == "hbm" && point["dtype"] == "bf16") return point["critical_intensity_flops_per_byte"].get<double>();
        FAIL("no bf16 HBM ridge point");
        return 0.0;
    };
    CHECK(hbm_ridge(run_json("roofline --hardware h100")) == doctest::Approx(989e12 / 3.35e12));
    CHECK(hbm_ridge(run_json("roofline --hardware h100 --set chip.hbm.bandwidth=4.945TB/s")) == doctest::Approx(200.0));
    CHECK(hbm_ridge(run_json("roofline --hardware h100 --set chip.peak.bf16=2PFLOP/s --set chip.hbm_bw_Bps=32Tb/s")) ==
          doctest::Approx(500.0));
    const auto table = run_ridgeline("roofline --hardware h100 --set chip.hbm.bandwidth=4.945TB/s");
    CHECK(table.out.rfind("what-if: chip.hbm_bw_Bps = 4.945 TB/s (the file: 3.350 TB/s)", 0) == 0);
}

TEST_CASE("--price: the cost of a run is chips x hours x the price given") {
    const std::string base = "train --model llama3-8b --hardware dgx-h100 --chips 64 --global-batch-seqs 256 --train-tokens 1e11";
    const json priced = run_json(base + " --price 2.5");
    const double hours = priced["time_to_train_s"].get<double>() / 3600.0;
    CHECK(priced["cost_usd"].get<double>() == doctest::Approx(64 * hours * 2.5).scale(0).epsilon(1e-6));
    CHECK(priced["overrides"][0]["path"] == "chip.price_usd_per_chip_hour");
}

TEST_CASE("--set refuses what it cannot apply, naming the path") {
    const std::string train = "train --model llama3-8b --hardware dgx-h100 --chips 8 ";
    expect_refusal(train + "--set chip.hbm.speed=1TB/s", {"--set", "chip.hbm.speed", "known:", "chip.hbm.bandwidth"});
    expect_refusal(train + "--set chip.nvlink.bandwidth=80GB", {"--set chip.nvlink.bandwidth", "is a size (B)", "expected a bandwidth"});
    expect_refusal(train + "--set chip.hbm.bandwidth=-1TB/s", {"--set chip.hbm.bandwidth", "> 0"});
    expect_refusal(train + "--set chip.hbm.bandwidth=0", {"--set chip.hbm.bandwidth", "> 0"});
    expect_refusal(train + "--set chip.hbm.bandwidth=5e-300", {"--set chip.hbm.bandwidth", "plausible range"});
    expect_refusal(train + "--set chip.hbm.bandwidth=4.8TB/h", {"--set chip.hbm.bandwidth", "unknown unit"});
    expect_refusal(train + "--set chip.hbm.bandwidth", {"--set", "PATH=VALUE"});
    expect_refusal(train + "--price -3", {"--set chip.price_usd_per_chip_hour", "> 0"});
    expect_refusal("train --model llama3-8b --hardware tpu-v5p --chips 8 --set chip.nvlink.bandwidth=1TB/s",
                   {"--set chip.nvlink.bandwidth", "tpu-v5p", "no such part"});
    expect_refusal("topology --topology " + (ridgeline::test::source_dir() / "hardware" / "topologies" / "hypercube-16.json").string() +
                       " --set chip.ici.bandwidth=1TB/s",
                   {"--set chip.ici.bandwidth", "custom topology file"});
    expect_refusal("model llama3-8b --set chip.hbm.bandwidth=1TB/s", {"--set"});  // a model has no hardware
}

TEST_CASE("--memory-margin: a plan fits only in the HBM left after the margin") {
    const std::string base = "train --model llama3-8b --hardware dgx-h100 --chips 8 --global-batch-seqs 8 --seq-len 2048 --dp 8 --strategy fsdp";
    const json full = run_json(base);
    REQUIRE(full["fits"] == true);
    const double used = full["memory_per_chip_bytes"].get<double>() / 80e9;  // H100 SXM: 80 GB
    REQUIRE(used < 0.95);
    const double loose = (1.0 - used) / 2.0, tight = std::min(0.5, 2.0 * (1.0 - used));
    const json roomy = run_json(base + " --memory-margin " + std::to_string(loose));
    const json cramped = run_json(base + " --memory-margin " + std::to_string(tight));
    CHECK(roomy["memory"]["hbm_bytes"].get<double>() == doctest::Approx(80e9 * (1.0 - loose)));
    CHECK(roomy["fits"] == true);
    CHECK(cramped["fits"] == false);
    CHECK(cramped["memory_per_chip_bytes"].get<double>() == doctest::Approx(full["memory_per_chip_bytes"].get<double>()));
    CHECK(cramped["overrides"][0]["by"].get<std::string>().find("--memory-margin") == 0);
    expect_refusal(base + " --memory-margin 0.9", {"--memory-margin"});
}

TEST_CASE("chip ranges with a step: every count from one end to the other, the step dividing the span") {
    const json scaling = run_json("search train --model llama3-8b --hardware dgx-h100 --chips 64..128:32 --global-batch-seqs 256");
    std::vector<std::int64_t> counts;
    for (const auto& point : scaling["points"]) counts.push_back(point["chips"].get<std::int64_t>());
    CHECK(counts == std::vector<std::int64_t>{64, 96, 128});
    expect_refusal("search train --model llama3-8b --hardware dgx-h100 --chips 64..128:24", {"--chips", "step 24", "does not divide"});
    expect_refusal("search train --model llama3-8b --hardware dgx-h100 --chips 64..128:x", {"--chips", "step"});
}

// The capacity question: the fewest chips that finish in time. Checked against a plain scaling
// sweep over every count (a separate path through the search), and against the data-parallel
// arithmetic: twice the chips, half the step, but for the stack's fixed time per step.
TEST_CASE("search train --deadline-days: the fewest chips that finish in time, or the fastest and a plain statement") {
    const std::string job = "search train --model llama3-8b --hardware dgx-h100 --global-batch-seqs 256 --seq-len 4096 --train-tokens 2e11";
    const json answer = run_json(job + " --deadline-days 10");
    const json sweep = run_json(job + " --chips 8..64:8");
    double first_meeting = 0;
    std::map<std::int64_t, double> days, step_s;
    for (const auto& point : sweep["points"]) {
        const double d = point["wall_clock_s"].get<double>() / 86400.0;
        days[point["chips"].get<std::int64_t>()] = d;
        step_s[point["chips"].get<std::int64_t>()] = point["step_time_s"].get<double>();
        if (first_meeting == 0 && d <= 10.0) first_meeting = point["chips"].get<double>();
    }
    std::ifstream stack_file(ridgeline::test::source_dir() / "stacks" / "megatron-core.json");
    const json fitted = json::parse(stack_file)["fitted"];
    const double fixed_s = fitted["per_step_overhead_s"].get<double>();
    // Each step also waits for the slowest of its ranks: cv x E[max of N normals] of the rest.
    const auto data_parallel_s = [&](std::int64_t chips) {
        const double wait = fitted["rank_time_cv"].get<double>() * ridgeline::expected_max_standard_normal(static_cast<double>(chips));
        return step_s.at(chips) / (1.0 + wait) - fixed_s;
    };
    CHECK(data_parallel_s(16) == doctest::Approx(data_parallel_s(8) / 2.0).scale(0).epsilon(0.01));
    CHECK(answer["deadline_met"] == true);
    CHECK(answer["chosen_chips"].get<double>() == first_meeting);
    CHECK(answer["deadline_s"].get<double>() == doctest::Approx(10.0 * 86400.0));
    for (const auto& point : answer["points"]) {
        const auto chips = point["chips"].get<std::int64_t>();
        CHECK(chips % 8 == 0);  // whole DGX nodes
        CHECK(point["wall_clock_s"].get<double>() / 86400.0 == doctest::Approx(days.at(chips)));
    }

    const auto hopeless = run_ridgeline(job + " --chips 8..32:8 --deadline-days 0.01");
    CHECK(hopeless.exit_code == 0);
    // 8 chips take days: even linear scaling to 32 could not reach 0.01 days, so the doubling stops there.
    CHECK(hopeless.out.find("no count searched finishes within 0.01 days; the fastest: 8 chips") != std::string::npos);
    expect_refusal("search train --model llama3-8b --hardware dgx-h100 --deadline-days 10", {"--deadline-days", "--train-tokens"});
    json bare = ridgeline::test::read_json(ridgeline::test::source_dir() / "hardware" / "chips" / "h100-sxm.json");
    bare.erase("default_system");  // a chip with no system around it has nothing to grow by
    const auto bare_path = ridgeline::test::scratch_dir("what_if") / "bare-h100.json";
    std::ofstream(bare_path) << bare.dump();
    expect_refusal("search train --model llama3-8b --hardware " + bare_path.string() + " --train-tokens 1e11 --deadline-days 10",
                   {"--chips", "range"});
}
