// The calibration sweep's passes and budget, on a scripted backend whose times are set here:
// each sample must keep the fastest of its passes, and a spent budget ends the run early.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "calibration/sweep.hpp"

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
