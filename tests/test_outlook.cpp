// Goodput and energy: the wall-clock time of a run once failures and checkpoints count, and the
// energy it draws. Expected values are worked by hand here (Young/Daly, Daly 2006) or come from
// the Llama 3 paper (more than 90% effective training time on 16,384 H100s).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/energy.hpp"
#include "engine/goodput.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

GoodputInputs example() {
    GoodputInputs in;
    in.useful_s = 1e6;
    in.chips = 1000;
    in.failures_per_chip_hour = 1e-5;  // 0.01 per hour for the job: a failure every 100 hours
    in.restart_s = 600;
    in.checkpoint_bytes = 1e12;
    in.checkpoint_write_Bps = 1e10;  // 100 s per checkpoint
    return in;
}

}  // namespace

TEST_CASE("goodput: Young/Daly interval and the expected wall-clock time, worked by hand") {
    const GoodputReport r = goodput(example());
    const double mtbf = 3600.0 / (1e-5 * 1000), delta = 100.0;
    CHECK(r.mean_time_between_failures_s == doctest::Approx(360000));
    CHECK(r.checkpoint_write_s == doctest::Approx(delta));
    const double tau = std::sqrt(2 * delta * mtbf) - delta;  // 8385.3 s
    CHECK(r.checkpoint_interval_s == doctest::Approx(tau));
    CHECK_FALSE(r.interval_given);
    // wall = useful (1 + delta / tau) + (wall / M) (restart + (tau + delta) / 2)
    const double wall = 1e6 * (1 + delta / tau) / (1 - (600 + (tau + delta) / 2) / mtbf);
    CHECK(r.wall_s == doctest::Approx(wall));
    CHECK(r.goodput == doctest::Approx(1e6 / wall));
    CHECK(r.expected_failures == doctest::Approx(wall / mtbf));
    CHECK(1e6 + r.checkpointing_s + r.lost_work_s + r.restarting_s == doctest::Approx(r.wall_s));
    // A given interval is used as given, even one longer than the run (an answer, not an error).
    GoodputInputs long_interval = example();
    long_interval.checkpoint_interval_s = 1e7;
    const GoodputReport once = goodput(long_interval);
    CHECK(once.interval_given);
    CHECK(once.finishes == false);  // half of a 1e7 s segment lost per failure outruns a failure every 3.6e5 s
}

TEST_CASE("goodput never rises with more failures, slower storage or a larger checkpoint, and never exceeds 1") {
    const auto goodput_of = [](double failures, double write_Bps, double bytes) {
        GoodputInputs in = example();
        in.failures_per_chip_hour = failures;
        in.checkpoint_write_Bps = write_Bps;
        in.checkpoint_bytes = bytes;
        return goodput(in).goodput;
    };
    for (double failures : {1e-7, 1e-6, 1e-5, 1e-4}) {
        for (double write : {1e8, 1e9, 1e10, 1e11}) {
            for (double bytes : {1e10, 1e11, 1e12, 1e13}) {
                CAPTURE(failures);
                CAPTURE(write);
                CAPTURE(bytes);
                const double g = goodput_of(failures, write, bytes);
                CHECK(g >= 0);
                CHECK(g <= 1);
                CHECK(goodput_of(failures * 2, write, bytes) <= g);
                CHECK(goodput_of(failures, write / 2, bytes) <= g);
                CHECK(goodput_of(failures, write, bytes * 2) <= g);
            }
        }
    }
    // Failures faster than recovery: the run never finishes, and says so.
    GoodputInputs hopeless = example();
    hopeless.failures_per_chip_hour = 0.05;  // a failure every 72 s against a 600 s restart
    const GoodputReport r = goodput(hopeless);
    CHECK_FALSE(r.finishes);
    CHECK(r.goodput == 0);
    hopeless.restart_s = 0;
    CHECK_THROWS_AS((void)goodput(hopeless), InputError);
}

TEST_CASE("energy: board power between idle and maximum by the busy share, hosts, PUE, worked by hand") {
    EnergyInputs in;
    in.chips = 8;
    in.hosts = 1;
    in.chip_idle_w = 100;
    in.chip_max_w = 700;
    in.host_w = 4600;
    in.pue = 1.5;
    in.busy_fraction = 0.5;
    in.step_s = 2;
    in.tokens_per_step = 1e6;
    const EnergyReport e = energy(in);
    CHECK(e.chip_w == doctest::Approx(400));
    CHECK(e.it_w == doctest::Approx(8 * 400 + 4600));
    CHECK(e.facility_w == doctest::Approx(1.5 * 7800));
    CHECK(e.per_step_j == doctest::Approx(2 * 11700));
    CHECK(e.per_million_tokens_j == doctest::Approx(2 * 11700));
    CHECK(e.over_s_j(3600) == doctest::Approx(11700 * 3600));
    // Energy grows with chips and with time.
    EnergyInputs more = in;
    more.chips = 16;
    more.hosts = 2;
    CHECK(energy(more).per_step_j > e.per_step_j);
    CHECK(e.over_s_j(7200) > e.over_s_j(3600));
    in.pue = 0.9;
    CHECK_THROWS_WITH_AS((void)energy(in), doctest::Contains("pue"), InputError);
}

TEST_CASE("train --train-tokens: LLaMA-3 405B on 16,384 H100s loses 5-15% to failures and checkpoints, as the Llama 3 paper reports") {
    // At Llama 3's scale and batch (16M tokens per step of 8K sequences; 126 layers do not split
    // into its 16 uneven stages here, so TP 8, PP 2 and FSDP 8): the paper reports "higher than 90%
    // effective training time" with 419 unexpected interruptions in 54 days.
    const auto result = test::run_ridgeline(
        "train --model llama3-405b --hardware dgx-h100 --chips 16384 --tp 8 --pp 2 --fsdp 8 --recompute full --seq-len 8192 "
        "--global-batch-tokens 16777216 "
        "--train-tokens 15.6e12 --json");
    REQUIRE(result.exit_code == 0);
    const auto doc = nlohmann::json::parse(result.out);
    const auto& g = doc["outlook"]["goodput"];
    CHECK(g["finishes"] == true);
    CHECK(g["goodput"].get<double>() >= 0.85);
    CHECK(g["goodput"].get<double>() <= 0.95);
    CHECK(g["wall_s"].get<double>() > doc["outlook"]["useful_s"].get<double>());
    // What it assumed is printed with where each figure came from.
    const std::string assumptions = doc["outlook"]["assumptions"].dump();
    CHECK(assumptions.find("failures per chip-hour 1.97e-05 (system dgx-h100)") != std::string::npos);
    CHECK(assumptions.find("checkpoint") != std::string::npos);
    // Energy: the H100 file gives no idle power, so the chips are charged their 700 W throughout.
    const auto& e = doc["outlook"]["energy"];
    CHECK(e["chip_w"].get<double>() == doctest::Approx(700));
    CHECK(e["facility_w"].get<double>() == doctest::Approx((16384 * 700.0 + 2048 * 4600.0) * 1.56));
    CHECK(e["run_j"].get<double>() == doctest::Approx(e["facility_w"].get<double>() * g["wall_s"].get<double>()));
    // The table says the same in words.
    const auto table = test::run_ridgeline(
        "train --model llama3-405b --hardware dgx-h100 --chips 16384 --tp 8 --pp 2 --fsdp 8 --recompute full --seq-len 8192 "
        "--global-batch-tokens 16777216 "
        "--train-tokens 15.6e12 --pue 1.1");
    REQUIRE(table.exit_code == 0);
    CHECK(table.out.find("goodput (effective training time)") != std::string::npos);
    CHECK(table.out.find("PUE 1.1 (--pue)") != std::string::npos);
}

TEST_CASE("train --train-tokens: missing inputs are named with the flag that supplies them, and bad ones are refused") {
    // The TPU v5p pod file gives a PUE only: goodput needs a failure rate, a restart time and storage.
    const auto tpu = test::run_ridgeline("train --model llama3-8b --hardware tpu-v5p --chips 64 --train-tokens 1e12 --json");
    REQUIRE(tpu.exit_code == 0);
    const auto doc = nlohmann::json::parse(tpu.out);
    CHECK_FALSE(doc["outlook"].contains("goodput"));
    CHECK(doc["outlook"]["missing"].dump().find("--failures-per-chip-hour") != std::string::npos);
    CHECK(doc["outlook"]["missing"].dump().find("chip power") != std::string::npos);
    // Given on the command line, they are used.
    const auto given = test::run_ridgeline(
        "train --model llama3-8b --hardware tpu-v5p --chips 64 --train-tokens 1e12 --failures-per-chip-hour 2e-5 --restart-s 300 "
        "--checkpoint-write-Bps-per-host 1e9 --json");
    REQUIRE(given.exit_code == 0);
    CHECK(nlohmann::json::parse(given.out)["outlook"]["goodput"]["goodput"].get<double>() > 0.5);
    for (const std::string& bad : {std::string("--pue 0.9"), std::string("--failures-per-chip-hour 0"), std::string("--restart-s -5"),
                                   std::string("--host-w 0")}) {
        const auto r = test::run_ridgeline("train --model llama3-8b --hardware dgx-h100 --chips 8 --train-tokens 1e12 " + bad);
        CAPTURE(bad);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find(bad.substr(0, bad.find(' '))) != std::string::npos);
    }
    // A system file with an implausible PUE is refused naming the file and field.
    nlohmann::json system = test::read_json(test::source_dir() / "hardware" / "systems" / "dgx-h100.json");
    system["operations"]["pue"]["value"] = 0.5;
    const auto path = test::scratch_dir("outlook") / "bad-pue.json";
    std::ofstream(path) << system.dump(2);
    const auto r = test::run_ridgeline("train --model llama3-8b --hardware " + path.string() + " --chips 8");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("operations.pue") != std::string::npos);
}

TEST_CASE("search train --objective goodput: failures grow with the chips, so the fastest count by steps need not be the first to finish") {
    // Each doubling at most halves the steps but doubles the job's failure rate. At 8,192 chips a
    // failure comes every 3600 / (8192 x 1e-3) = 439 s of job time, sooner than a 600 s restart
    // ends: that run never finishes, so goodput must pick a smaller count while the step-time
    // objective still picks the largest.
    const std::string job = "search train --model llama3-8b --hardware dgx-h100 --chips 512..8192 --global-batch-tokens 4194304 "
                            "--train-tokens 1e12 --failures-per-chip-hour 1e-3 --restart-s 600 --json";
    const auto by_goodput = test::run_ridgeline(job + " --objective goodput");
    const auto by_time = test::run_ridgeline(job + " --objective time");
    REQUIRE(by_goodput.exit_code == 0);
    REQUIRE(by_time.exit_code == 0);
    const auto g = nlohmann::json::parse(by_goodput.out), t = nlohmann::json::parse(by_time.out);
    CHECK(t["chosen_chips"] == 8192);
    CHECK(g["chosen_chips"].get<int>() < 8192);
    CHECK(g["points"].back()["wall_clock_s"].is_null());
    CHECK(g["points"].back()["goodput"].get<double>() == 0.0);
    double previous = 2.0;
    for (const auto& p : g["points"]) {
        REQUIRE(p.contains("goodput"));
        CHECK(p["goodput"].get<double>() <= previous);  // more chips, more failures: never more goodput
        previous = p["goodput"].get<double>();
    }
    // The chosen count has the shortest wall-clock time of those that finish.
    double best = 1e300;
    for (const auto& p : g["points"])
        if (!p["wall_clock_s"].is_null()) best = std::min(best, p["wall_clock_s"].get<double>());
    for (const auto& p : g["points"])
        if (p["chips"] == g["chosen_chips"]) CHECK(p["wall_clock_s"].get<double>() == doctest::Approx(best));
}

TEST_CASE("serve: energy per million output tokens is the facility's power over the throughput, worked by hand") {
    // DGX H200: 8 chips of 80 W idle and 700 W maximum, one 4,600 W host, PUE 1.56 (system file);
    // --pue overrides the last.
    const auto r = test::run_ridgeline("serve --model llama3-8b --hardware dgx-h200 --chips 8 --tp 8 --batch 32 --input-len 1000 "
                                       "--output-len 500 --pue 1.2 --json");
    REQUIRE(r.exit_code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    const auto& e = doc["energy"];
    const double share = e["kernel_share"].get<double>();
    CHECK(share > 0.0);
    CHECK(share <= 1.0);
    const double chip_w = 80.0 + (700.0 - 80.0) * share;
    const double facility_w = (8 * chip_w + 4600.0) * 1.2;
    CHECK(e["facility_w"].get<double>() == doctest::Approx(facility_w));
    CHECK(e["per_million_output_tokens_j"].get<double>() ==
          doctest::Approx(facility_w / doc["throughput"]["output_tokens_per_s"].get<double>() * 1e6));
    CHECK(e["assumptions"].dump().find("PUE 1.2 (--pue)") != std::string::npos);
    // A TPU chip file gives no power: the energy is named missing, not invented.
    const auto tpu = test::run_ridgeline("serve --model llama3-8b --hardware tpu-v5p --chips 4 --tp 4 --input-len 100 --output-len 100 --json");
    REQUIRE(tpu.exit_code == 0);
    const auto t = nlohmann::json::parse(tpu.out)["energy"];
    CHECK_FALSE(t.contains("facility_w"));
    CHECK(t["missing"].dump().find("chip power") != std::string::npos);
    CHECK(test::run_ridgeline("serve --model llama3-8b --hardware dgx-h200 --chips 8 --tp 8 --input-len 100 --output-len 100 --pue 0.5").exit_code == 2);
}
