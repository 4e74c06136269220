// Serving's prediction intervals: drawn from the held-out errors of the published serving runs
// (nothing is fitted on them), checked for coverage, and given by serve and search serve.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "accuracy/residuals_file.hpp"
#include "app/validate.hpp"
#include "core/error.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

const std::filesystem::path kServeRecords = test::data_file("runs/published-serve-records.json");

app::ValidateOutcome serving_cross_validation() {
    static const app::ValidateOutcome outcome = [] {
        app::ValidateRequest request;
        request.file = kServeRecords;
        request.cross_validate = true;
        request.data_dir = test::source_dir();
        return app::validate(request);
    }();
    return outcome;
}

}  // namespace

TEST_CASE("serving intervals: every published serving run is held out as it stands, and 90% intervals cover 85-95% of them") {
    const app::ValidateOutcome outcome = serving_cross_validation();
    REQUIRE(outcome.cross_validation);
    const CrossValidation& cv = *outcome.cross_validation;
    CHECK(cv.serving);
    // One residual per serving record with a measured throughput; nothing fitted, so in sample is out of sample.
    const nlohmann::json records = test::read_json(kServeRecords);
    CHECK(cv.held_out.size() == records.at("records").size());
    for (std::size_t i = 0; i < cv.held_out.size(); ++i) CHECK(cv.held_out[i].error == cv.in_sample[i]);
    // The error is the record's throughput error, as validate reports it.
    for (const RecordResult& r : outcome.result.records) {
        const auto it = std::find_if(cv.held_out.begin(), cv.held_out.end(), [&](const Residual& h) { return h.id == r.id; });
        REQUIRE(it != cv.held_out.end());
        CHECK(it->error == doctest::Approx(r.predicted_output_tokens_per_s / r.measured_output_tokens_per_s - 1.0).scale(0).epsilon(1e-12));
        CHECK(it->kind.params == "none");
        CHECK(it->kind.stack_family == r.engine);  // every published run is simulated on an engine
    }
    // The bar for intervals: 90% intervals hold 85-95% of held-out runs (2026-11-29: 88 of 96).
    const double coverage = static_cast<double>(cv.run_coverage.covered) / cv.run_coverage.with_interval;
    CHECK(cv.run_coverage.with_interval == static_cast<int>(cv.held_out.size()));
    CHECK(coverage >= 0.85);
    CHECK(coverage <= 0.95);
    // The shipped residuals are these, as this binary computes them (regenerate with
    // validate tests/data/runs/published-serve-records.json --cross-validate --write-residuals accuracy/serving-residuals.json).
    std::vector<Residual> computed = cv.held_out;
    computed.insert(computed.end(), cv.latency_held_out.begin(), cv.latency_held_out.end());
    const std::vector<Residual> shipped = load_residuals(serving_residuals_path(test::source_dir()));
    REQUIRE(shipped.size() == computed.size());
    for (std::size_t i = 0; i < shipped.size(); ++i) {
        CAPTURE(shipped[i].id);
        CHECK(shipped[i].id == computed[i].id);
        CHECK(shipped[i].quantity == computed[i].quantity);
        CHECK(shipped[i].kind.stack_family == computed[i].kind.stack_family);
        CHECK(shipped[i].error == doctest::Approx(computed[i].error).scale(0).epsilon(1e-9));
    }
    // Each measured latency is held out too: every record's mean TTFT and ITL (NIM's page gives means),
    // as validate compares them, and their 90% intervals cover 85-95% (2026-11-29: 73 of 79 each).
    int ttft = 0, itl = 0;
    for (const RecordResult& r : outcome.result.records) {
        for (const Residual& l : cv.latency_held_out) {
            if (l.id != r.id) continue;
            const bool is_ttft = l.quantity.rfind("ttft_", 0) == 0;
            const auto& latency = is_ttft ? r.ttft : r.itl;
            REQUIRE(latency);
            CHECK(l.quantity == (is_ttft ? "ttft_" : "itl_") + latency->statistic);
            CHECK(l.error == doctest::Approx(latency->predicted_s / latency->measured_s - 1.0).scale(0).epsilon(1e-12));
            (is_ttft ? ttft : itl) += 1;
        }
    }
    CHECK(ttft == static_cast<int>(std::count_if(outcome.result.records.begin(), outcome.result.records.end(), [](const RecordResult& r) { return r.ttft.has_value(); })));
    CHECK(itl == static_cast<int>(std::count_if(outcome.result.records.begin(), outcome.result.records.end(), [](const RecordResult& r) { return r.itl.has_value(); })));
    CHECK(ttft >= 70);
    for (const char* quantity : {"ttft_mean", "itl_mean"}) {
        CAPTURE(quantity);
        REQUIRE(cv.latency_coverage.count(quantity) == 1);
        const auto& c = cv.latency_coverage.at(quantity);
        const double share = static_cast<double>(c.covered) / c.with_interval;
        CHECK(share >= 0.85);
        CHECK(share <= 0.95);
    }
}

TEST_CASE("serving intervals: serve bounds its throughput by split-conformal ranks of like runs' errors, worked here") {
    // Llama 3.3 70B FP8 on two H100s under NIM's engine, as its published runs were.
    const auto result = test::run_ridgeline(
        "serve --model llama3.3-70b --hardware h100-sxm --chips 2 --tp 2 --weights-dtype fp8 --kv-dtype fp8 "
        "--input-len 1000 --output-len 1000 --concurrency 50 --requests 200 --engine nim --json");
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const nlohmann::json doc = nlohmann::json::parse(result.out);
    const nlohmann::json& interval = doc.at("throughput_interval");
    REQUIRE(interval.at("available") == true);
    CHECK(interval.at("of") == "under_load");
    // The like runs: NIM's, on Hopper, dense, at 1-64 chips. Their factors predicted / measured,
    // sorted; the k-th from each end with k = floor(0.05 (n + 1)).
    std::vector<double> factors;
    const nlohmann::json shipped = test::read_json(serving_residuals_path(test::source_dir()));
    for (const auto& r : shipped.at("residuals"))
        if (r.value("quantity", "throughput") == "throughput" && r.at("stack_family") == "nim" && r.at("chip_family") == "hopper" &&
            r.at("moe") == false && r.at("chips").get<int>() <= 64)
            factors.push_back(1.0 + r.at("error").get<double>());
    REQUIRE(factors.size() >= 5);
    std::sort(factors.begin(), factors.end());
    const auto k = static_cast<std::size_t>(std::floor(0.05 * (static_cast<double>(factors.size()) + 1.0)));
    const double predicted = doc.at("load").at("output_tokens_per_s").get<double>();
    CHECK(interval.at("held_out_runs").get<std::size_t>() == factors.size());
    CHECK(interval.at("low_output_tokens_per_s").get<double>() == doctest::Approx(predicted / factors[factors.size() - k]).epsilon(1e-12));
    CHECK(interval.at("high_output_tokens_per_s").get<double>() == doctest::Approx(predicted / factors[k - 1]).epsilon(1e-12));
    CHECK(interval.at("like").get<std::string>().find("nim") != std::string::npos);
    // The mean time to first token the same way: its value over the factors of the like runs' TTFT errors.
    std::vector<double> ttft_factors;
    for (const auto& r : shipped.at("residuals"))
        if (r.value("quantity", "") == "ttft_mean" && r.at("stack_family") == "nim" && r.at("chip_family") == "hopper" && r.at("moe") == false)
            ttft_factors.push_back(1.0 + r.at("error").get<double>());
    REQUIRE(ttft_factors.size() >= 5);
    std::sort(ttft_factors.begin(), ttft_factors.end());
    const auto kt = static_cast<std::size_t>(std::floor(0.05 * (static_cast<double>(ttft_factors.size()) + 1.0)));
    const double ttft_s = doc.at("load").at("ttft_s").at("mean").get<double>();
    const nlohmann::json& ttft = doc.at("load").at("intervals").at("ttft_mean");
    REQUIRE(ttft.at("available") == true);
    CHECK(ttft.at("low_s").get<double>() == doctest::Approx(ttft_s / ttft_factors[ttft_factors.size() - kt]).epsilon(1e-12));
    CHECK(ttft.at("high_s").get<double>() == doctest::Approx(ttft_s / ttft_factors[kt - 1]).epsilon(1e-12));
    CHECK(doc.at("load").at("intervals").contains("itl_mean"));
}

TEST_CASE("serving intervals: a model unlike every held-out run gets none and says why, and the search gives one per configuration") {
    // No published serving run is of an MoE model.
    auto result = test::run_ridgeline("serve --model mixtral-8x7b --hardware dgx-h100 --chips 2 --tp 2 --input-len 1000 --output-len 100 --json");
    REQUIRE(result.exit_code == 0);
    const nlohmann::json none = nlohmann::json::parse(result.out).at("throughput_interval");
    CHECK(none.at("available") == false);
    CHECK(none.at("why_none").get<std::string>().find("fewer than 19") != std::string::npos);
    result = test::run_ridgeline(
        "search serve --model llama3-8b --hardware dgx-h100 --chips 1..2 --input-len 1000 --output-len 200 --slo-ttft-ms 2000 "
        "--slo-tpot-ms 100 --top 3 --json");
    REQUIRE(result.exit_code == 0);
    const nlohmann::json search = nlohmann::json::parse(result.out);
    REQUIRE(!search.at("best").empty());
    for (const auto& best : search.at("best")) {
        const nlohmann::json& i = best.at("output_tokens_per_s_interval");
        REQUIRE(i.at("available") == true);
        CHECK(i.at("low_output_tokens_per_s").get<double>() <= i.at("high_output_tokens_per_s").get<double>());
    }
}

TEST_CASE("serving intervals: cross-validating the serving runs of one source, or holding a parameter, is refused, saying why") {
    test::expect_refusal("validate " + kServeRecords.string() + " --source nim_ --cross-validate", {"--cross-validate", "at least two sources"});
    test::expect_refusal("validate " + kServeRecords.string() + " --cross-validate --hold rank_time_cv", {"--hold", "nothing is fitted"});
}
