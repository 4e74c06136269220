// Accuracy out of sample: leave-one-source-out cross-validation of the dev set, the stacks without
// records of their own, and the prediction intervals drawn from the held-out residuals. Expected
// values are worked by hand (quantiles of a list written here, the straggler formula against
// Harter's table) or are the issue's stated bounds; the dev set is tests/data/runs/published-runs-dev.json.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "accuracy/like_runs.hpp"
#include "accuracy/residuals_file.hpp"
#include "core/error.hpp"
#include "engine/stragglers.hpp"
#include "test_support.hpp"
#include "validation/stack_fit.hpp"

using namespace ridgeline;

namespace {

const std::filesystem::path kDevSet = test::data_file("runs/published-runs-dev.json");
// Sanitized, the whole dev set's cross-validation takes ~20 minutes: those builds check the
// procedure on two sources and leave the dev set's figures to the release build.
#ifdef RIDGELINE_SANITIZED
constexpr bool kWholeDevSet = false;
#else
constexpr bool kWholeDevSet = true;
#endif

// One cross-validation of the dev set for every test that reads it (about a minute on two cores).
const nlohmann::json& dev_cross_validation() {
    static const nlohmann::json doc = [] {
        const auto result = test::run_ridgeline("validate " + kDevSet.string() + " --cross-validate --json");
        INFO(result.err);
        REQUIRE(result.exit_code == 0);
        return nlohmann::json::parse(result.out).at("cross_validation");
    }();
    return doc;
}

// The dev set cut to the records `keep` holds, written where the test can name it.
std::string dev_subset(const std::string& name, const std::function<bool(const nlohmann::json&)>& keep) {
    nlohmann::json doc = test::read_json(kDevSet);
    nlohmann::json records = nlohmann::json::array();
    for (const auto& r : doc.at("records"))
        if (keep(r)) records.push_back(r);
    doc["records"] = records;
    const auto path = test::scratch_dir("cross_validation") / (name + ".json");
    std::ofstream(path) << doc.dump();
    return path.string();
}

// Narayanan et al.'s two tables (Megatron-LM in both, DeepSpeed's ZeRO-3 in Table 2 only).
std::string narayanan_tables(const std::string& name) {
    return dev_subset(name, [](const nlohmann::json& r) { return r.at("source").at("key").get<std::string>().rfind("narayanan2021", 0) == 0; });
}

// Cross-validation of Narayanan et al.'s two tables under `flags`, as validate's JSON gives it.
nlohmann::json narayanan_cross_validation(const std::string& name, const std::string& flags = "") {
    const auto result = test::run_ridgeline("validate " + narayanan_tables(name) + " --cross-validate " + flags + " --json");
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return nlohmann::json::parse(result.out).at("cross_validation");
}

Residual residual(const std::string& id, const std::string& source, double error, const std::string& stack = "megatron",
                  const std::string& chip = "hopper", std::int64_t chips = 128) {
    return {id, source, RunKind{stack, chip, false, chips, "own"}, error};
}

}  // namespace

TEST_CASE("cross-validation: a step's per-step cost and straggler wait compose as the fitter prices them") {
    // The fitter re-prices only the layer and sharded shares in the engine and adds the rest in closed
    // form: (base + per-step cost) x (1 + cv x E[max of N normals]), E[max] checked against Harter's table.
    const std::vector<RunRecord> records = load_run_records(kDevSet, test::source_dir());
    FitCases cases = build_fit_cases({records.front()}, test::source_dir());
    REQUIRE(cases.cases.size() == 1);
    FitCase& c = cases.cases.front();
    TrainingScenario s = c.scenario;
    REQUIRE(s.chip.kernels);
    s.stack.fitted = {0.0, 0.3, 0.0, 1.0};
    const double base_s = simulate_training(s).step_time_s;
    s.stack.fitted = {0.25, 0.3, 0.01, 1.0};
    const double full_s = simulate_training(s).step_time_s;
    const double by_hand_s = (base_s + 0.25) * (1.0 + 0.01 * expected_max_standard_normal(static_cast<double>(s.cluster.chips())));
    CHECK(full_s == doctest::Approx(by_hand_s).scale(0).epsilon(1e-12));
    // And the fitter's error for the same parameters is the engine's.
    const double measured = c.measured_tokens_per_s;
    CHECK(case_error(c, {0.25, 0.3, 0.01, 1.0}) == doctest::Approx(c.tokens_per_step / full_s / measured - 1.0).scale(0).epsilon(1e-12));
}

TEST_CASE("intervals: split-conformal ranks of the residuals of like runs, worked by hand") {
    // 19 like runs, errors -9% .. +9%: n + 1 = 20, k = floor(0.05 x 20) = 1: the smallest and largest.
    std::vector<Residual> residuals;
    for (int i = -9; i <= 9; ++i) residuals.push_back(residual("r" + std::to_string(i), "s" + std::to_string(i % 3), 0.01 * i));
    const RunKind query{"megatron", "hopper", false, 128, "own"};
    PredictionInterval interval = prediction_interval(residuals, query);
    REQUIRE(interval.available);
    CHECK(interval.runs == 19);
    CHECK(interval.low_factor == doctest::Approx(0.91));
    CHECK(interval.high_factor == doctest::Approx(1.09));
    CHECK(interval.like.find("megatron") != std::string::npos);
    // 39 runs: k = floor(0.05 x 40) = 2: the second smallest and second largest.
    for (int i = 10; i < 30; ++i) residuals.push_back(residual("q" + std::to_string(i), "t", 0.0));
    interval = prediction_interval(residuals, query);
    CHECK(interval.runs == 39);
    CHECK(interval.low_factor == doctest::Approx(0.92));
    CHECK(interval.high_factor == doctest::Approx(1.08));
    // Leaving a run out, or its whole source.
    CHECK(prediction_interval(residuals, query, 0.9, {"r-9", ""}).runs == 38);
    CHECK(prediction_interval(residuals, query, 0.9, {"", "t"}).runs == 19);
}

TEST_CASE("intervals: likeness relaxes from scale to stack to chip family, and none below the runs the level needs") {
    // The smallest and largest of n held-out factors bound a new one with probability (n - 1) / (n + 1):
    // 90% needs n >= 19, 80% n >= 9; never fewer than five.
    CHECK(like_runs_needed(0.9) == 19);
    CHECK(like_runs_needed(0.8) == 9);
    CHECK(like_runs_needed(0.5) == kMinLikeRuns);
    std::vector<Residual> residuals;
    for (int i = 0; i < 19; ++i) residuals.push_back(residual("a" + std::to_string(i), "s", 0.01 * i, "pytorch-fsdp", "hopper", 8));
    const RunKind megatron_query{"megatron", "hopper", false, 1024, "own"};
    PredictionInterval interval = prediction_interval(residuals, megatron_query);
    REQUIRE(interval.available);
    CHECK(interval.runs == 19);
    CHECK(interval.like.find("megatron") == std::string::npos);  // matched on the chip family, not the stack
    CHECK(interval.like.find("hopper") != std::string::npos);
    // A family-priced or MoE query has no like run at all: no interval, and it says why.
    for (const RunKind& none : {RunKind{"megatron", "hopper", false, 1024, "family"}, RunKind{"megatron", "hopper", true, 1024, "own"}}) {
        interval = prediction_interval(residuals, none);
        CHECK_FALSE(interval.available);
        CHECK(interval.why_none.find("fewer than 19") != std::string::npos);
    }
    residuals.resize(18);
    CHECK_FALSE(prediction_interval(residuals, megatron_query).available);
    // At 80% the same 18 runs are enough: the 1st and 18th of them.
    interval = prediction_interval(residuals, megatron_query, 0.8);
    REQUIRE(interval.available);
    CHECK(interval.low_factor == doctest::Approx(1.0));
    CHECK(interval.high_factor == doctest::Approx(1.17));
}

TEST_CASE("stack fit: a per-step cost is fitted only where the records' step lengths can tell it from a per-layer share") {
    // A per-step cost c moves a step of T seconds by c / T, a per-layer share by the same fraction of
    // every step: at the largest cost tried (1 s) the shortest and the longest step must differ by at
    // least 10 points, 1 / T_min - 1 / T_max >= 0.1 per second, worked here from the measured steps.
    const std::vector<RunRecord> records = load_run_records(kDevSet, test::source_dir());
    const auto fitted_step_cost = [&](const std::vector<std::string>& sources, double& contrast) {
        std::vector<RunRecord> subset;
        for (const RunRecord& r : records)
            if (std::find(sources.begin(), sources.end(), r.source_key) != sources.end()) subset.push_back(r);
        FitCases cases = build_fit_cases(subset, test::source_dir());
        std::vector<FitCase*> all;
        double shortest_s = 1e30, longest_s = 0;
        for (FitCase& c : cases.cases) {
            all.push_back(&c);
            const double step_s = c.tokens_per_step / c.measured_tokens_per_s;
            shortest_s = std::min(shortest_s, step_s), longest_s = std::max(longest_s, step_s);
        }
        contrast = 1.0 / shortest_s - 1.0 / longest_s;
        const StackFit fit = fit_stack(all, {});
        REQUIRE(fit.models >= 3);
        return std::find(fit.fitted.begin(), fit.fitted.end(), "per_step_overhead_s") != fit.fitted.end();
    };
    // Pythia: 0.4-7.1 s steps from eight models.
    double contrast = 0;
    CHECK(fitted_step_cost({"pythia_2023"}, contrast));
    CHECK(contrast > 1.0);
    // BLOOM, GLM-130B and MT-NLG: six models, every step 44-143 s, so 1 s would move them by 1.6 points at most.
    CHECK_FALSE(fitted_step_cost({"bigscience_bloom_tr11", "glm130b_2022", "mtnlg_2022"}, contrast));
    CHECK(contrast < 0.1);
}

TEST_CASE("cross-validation: each source is predicted by fits that never saw it, by stack, family or pool") {
    // Narayanan et al.'s two tables: Megatron-LM in both (10 + 6 records), DeepSpeed (the 2021 release,
    // which runs on the megatron-deepspeed stack) in Table 2 only. Leaving Table 2 out, Megatron-LM keeps
    // Table 1's 10 records (its own fit) and DeepSpeed has none, nor has its family: the pooled fit of
    // what is left prices it.
    const nlohmann::json cv = narayanan_cross_validation("narayanan");
    CHECK(cv.at("overall").at("count") == 22);
    int deepspeed = 0;
    for (const auto& r : cv.at("records")) {
        CAPTURE(r.at("id"));
        const bool is_deepspeed = r.at("stack_family") == "deepspeed";
        deepspeed += is_deepspeed;
        CHECK(r.at("parameters") == (is_deepspeed ? "pooled" : "own"));
    }
    CHECK(deepspeed == 6);
    // In sample, DeepSpeed's 6 records are enough for a fit of its own.
    CHECK(cv.at("fits").contains("megatron-deepspeed"));
}

TEST_CASE("cross-validation: a family's fit frees what a stack's own does, and only the pool across families holds more") {
    const nlohmann::json cv = narayanan_cross_validation("narayanan-family", "--hold none --hold-pooled layer_overhead_fraction");
    // The megatron family's records here are exactly megatron-lm-2021's 16: fitted on the same records
    // under the same holds, the family's fit is the stack's own, per-layer overhead included.
    const auto& own = cv.at("fits").at("megatron-lm-2021");
    const auto& family = cv.at("family_fits").at("megatron");
    CHECK(family.at("records") == own.at("records"));
    CHECK(own.at("layer_overhead_fraction").get<double>() > 0.0);
    CHECK(family.at("layer_overhead_fraction").get<double>() == doctest::Approx(own.at("layer_overhead_fraction").get<double>()));
    // The pool of all 22 records (both families) holds it, as asked.
    CHECK(cv.at("pooled").at("records") == 22);
    CHECK(cv.at("pooled").at("layer_overhead_fraction").get<double>() == 0.0);
}

TEST_CASE("cross-validation: what a stack's own records cannot show comes from a wider fit, never the neutral value") {
    // Megatron-LM's 16 records in Narayanan et al.'s tables shard nothing, so its own fit cannot set the
    // share of ZeRO-3 / FSDP collectives it reaches; DeepSpeed's 6 ZeRO-3 records in the pool of all 22 can.
    const nlohmann::json cv = narayanan_cross_validation("narayanan-borrow");
    const auto& pooled = cv.at("pooled");
    REQUIRE(pooled.at("borrowed").empty());
    const double pooled_share = pooled.at("sharded_comm_efficiency").get<double>();
    CHECK(pooled_share < 1.0);  // ZeRO-3 at 384-2240 GPUs reached a small share of the modelled rate
    const auto& megatron = cv.at("fits").at("megatron-lm-2021");
    CHECK(megatron.at("borrowed").at("sharded_comm_efficiency") == "pooled");
    CHECK(megatron.at("sharded_comm_efficiency").get<double>() == doctest::Approx(pooled_share));
    // DeepSpeed's own records show it: its own value, nothing borrowed for it.
    const auto& deepspeed = cv.at("fits").at("megatron-deepspeed");
    CHECK_FALSE(deepspeed.at("borrowed").contains("sharded_comm_efficiency"));
}

TEST_CASE("cross-validation: a family's own hold keeps its fits neutral and borrows nothing in its place") {
    // As in the case above, but Megatron-LM's family holds the sharded share: its fit keeps the
    // neutral 1 rather than the pool's, and the pool, which DeepSpeed's ZeRO-3 records still fit, is untouched.
    const nlohmann::json cv = narayanan_cross_validation("narayanan-in-family", "--hold-in-family megatron:sharded_comm_efficiency");
    const auto& megatron = cv.at("fits").at("megatron-lm-2021");
    CHECK(megatron.at("sharded_comm_efficiency").get<double>() == 1.0);
    CHECK_FALSE(megatron.at("borrowed").contains("sharded_comm_efficiency"));
    CHECK(cv.at("family_fits").at("megatron").at("sharded_comm_efficiency").get<double>() == 1.0);
    CHECK(cv.at("pooled").at("sharded_comm_efficiency").get<double>() < 1.0);
    const auto& deepspeed = cv.at("fits").at("megatron-deepspeed");
    CHECK(deepspeed.at("sharded_comm_efficiency").get<double>() < 1.0);
}

TEST_CASE("cross-validation: plain PyTorch's sharded share, held in its family, carries from one or two nodes to twelve") {
    // The family's three sources: IBM's fms-fsdp (96-128 GPUs, 12-16 nodes), Ai2's OLMo-core and TinyLlama (one
    // or two nodes). Fitted on the small runs, the share of the link rate FSDP's collectives reach
    // stands in for what those runs cannot tell it from, and carried to twelve nodes it prices fms-fsdp's
    // full-recompute 34B and 70B H100 runs a third too slow; held at the link rate in the family, as the fit
    // policy's elimination chose on the whole dev set, they come within the issue's 20% (the family's held-out
    // median and p90 go from 10.1% and 39.1% to 4.3% and 20.6%; its A100 70B run, 16 nodes, from -40% to -21%).
    const std::string family = dev_subset("pytorch-family", [](const nlohmann::json& r) {
        const std::string key = r.at("source").at("key");
        return key == "ibm_fms_fsdp_2024" || key == "allenai_olmo_core_readme_2024-11" || key == "tinyllama_readme_2023-09";
    });
    const auto run = [&](const std::string& flags) {
        const auto result = test::run_ridgeline("validate " + family + " --cross-validate --hold-pooled none " + flags + " --json");
        INFO(result.err);
        REQUIRE(result.exit_code == 0);
        return nlohmann::json::parse(result.out).at("cross_validation");
    };
    const auto score = [](const nlohmann::json& cv) {
        return cv.at("overall").at("median_abs_error").get<double>() + 0.5 * cv.at("overall").at("p90_abs_error").get<double>();
    };
    const auto error_of = [](const nlohmann::json& cv, const std::string& id) {
        for (const auto& r : cv.at("records"))
            if (r.at("id") == id) return r.at("error").get<double>();
        FAIL("no record " << id);
        return 0.0;
    };
    const nlohmann::json fitted = run("--hold-in-family none");
    const nlohmann::json held = run("--hold-in-family pytorch:sharded_comm_efficiency");
    CHECK(score(held) < score(fitted));
    for (const char* id : {"fms-fsdp-34b-h100-sxm-96gpu-fsdp-ac-bs2-cf6e42c", "fms-fsdp-70b-h100-sxm-96gpu-fsdp-ac-bs2-cf6e42c"}) {
        CAPTURE(id);
        CHECK(error_of(fitted, id) < -0.25);
        CHECK(std::abs(error_of(held, id)) <= 0.20);
    }
}

TEST_CASE("bad input: a family hold that names no family of the records, or no stack parameter, is refused") {
    const std::string tables = narayanan_tables("bad-hold");
    test::expect_refusal("validate " + tables + " --cross-validate --hold-in-family megatron", {"--hold-in-family", "family:stack_parameter"});
    test::expect_refusal("validate " + tables + " --cross-validate --hold-in-family megatron:tp", {"--hold-in-family", "megatron:tp"});
    test::expect_refusal("validate " + tables + " --cross-validate --hold-in-family maxtext:rank_time_cv", {"--hold-in-family", "\"maxtext\""});
    test::expect_refusal("validate " + tables + " --hold-in-family megatron:rank_time_cv", {"--hold-in-family", "--cross-validate"});
    const auto dir = test::scratch_dir("fit-policy");
    std::filesystem::create_directories(dir / "accuracy");
    std::ofstream(dir / "accuracy" / "fit-policy.json")
        << R"({"schema": "ridgeline.fit-policy/1", "origin": "test", "held": [], "held_in_family": ["pytorch-sharded_comm_efficiency"]})";
    CHECK_THROWS_WITH_AS((void)load_fit_policy(dir), doctest::Contains("held_in_family"), InputError);
}

TEST_CASE("cross-validation: the shipped stacks carry the borrowed parameters the in-sample fits took") {
    if (!kWholeDevSet) return;
    const nlohmann::json& cv = dev_cross_validation();
    int borrowed = 0;
    for (const auto& [name, fit] : cv.at("fits").items()) {
        CAPTURE(name);
        const nlohmann::json stack = test::read_json(test::source_dir() / "stacks" / (name + ".json"));
        const nlohmann::json& fitted = stack.at("fitted");
        for (const auto& [parameter, from] : fit.at("borrowed").items()) {
            CAPTURE(parameter);
            const nlohmann::json& wider = from == "pooled" ? cv.at("pooled") : cv.at("family_fits").at(stack.value("family", name));
            CHECK(fitted.at("borrowed").at(parameter) == from);
            CHECK(fitted.value(parameter, 1.0) == doctest::Approx(wider.at(parameter).get<double>()));
            ++borrowed;
        }
    }
    CHECK(borrowed >= 1);
}

TEST_CASE("cross-validation: the dev set's held-out accuracy, its intervals' coverage and the shipped residuals") {
    if (!kWholeDevSet) return;
    const nlohmann::json& cv = dev_cross_validation();
    const double median = cv.at("overall").at("median_abs_error").get<double>();
    const double p90 = cv.at("overall").at("p90_abs_error").get<double>();
    // Every training record with a measured rate is held out once.
    int measured = 0;
    const nlohmann::json dev_set = test::read_json(kDevSet);
    for (const auto& r : dev_set.at("records"))
        measured += r.at("kind") == "train" && !r.at("measured").at("tokens_per_s").is_null();
    CHECK(cv.at("overall").at("count") == measured);
    // Out of sample is never better than in sample on the same records.
    CHECK(median >= cv.at("in_sample").at("median_abs_error").get<double>());
    CHECK(p90 >= cv.at("in_sample").at("p90_abs_error").get<double>());
    // Where it stands (2026-12-02: 6.2%, 18.9% on 386 records with TinyLlama's two lit-gpt runs, a third plain-PyTorch
    // source; 6.3%, 18.9% on 384 before; 2026-12-01, twenty-second session: 6.4%, 19.43%, once DeepSpeed's 2021 ZeRO-3 gathers
    // wait for the device and copy a piece per rank, as its code did; 6.4%, 19.90%, once a chip keeps its slice of a residual
    // stream whose embedding the strategy splits (MaxText's tensor axis); 6.4%, 20.04% before, with parameters a
    // stack's records cannot show borrowed from its family's or the pool's fit; 6.8%, 20.04% on 384 records with Zero Bubble's runs, which joined once an uneven
    // pipeline was paced by its slowest stage (7.1%, 20.3% on 372 with that alone); before, 7.0%, 20.04% on 372 records with Ai2's OLMo-core runs, a fresh source of FSDP2 and
    // torch.compile that its family's fit (fms-fsdp's) prices 10% too slow to 27% too fast, and the elimination rerun,
    // which now holds the per-layer share and the per-step cost out of the pool across families; before, 6.8%, 19.7%
    // with LLM Foundry's records keyed by the campaign that published
    // them, three sources where there was one, and the fit policy rerun, which now holds nothing (6.8%, 20.0%
    // under the old holds); 7.7%, 20.7% once LLM Foundry's records reduce gradients as their MP Mode
    // says; 7.4%, 21.0% with the A100's SM count and a per-step cost fitted only where
    // the steps can show one; 7.6%, 21.4%, after the DGX Cloud MaxText runs were moved off NeMo's fit
    // (7.7%, 21.5%) and hidden FSDP gathers were charged their SMs; 364 records with IBM's fms-fsdp runs, a
    // fresh source 4-31% off held out: 7.4%, 21.4%, the elimination rerun keeping its holds; 2026-11-29, the
    // elimination rerun on 355 records, the pool across families holding the straggler spread: 7.3%, 20.5%;
    // with Nemotron-4 15B: 7.4%, 22.1%, its fresh source 6-15% too
    // fast held out; family fits freeing what a stack's own fit frees: 7.7%, 21.7%; 352
    // records with GLM-130B, DeepSeek-V3 and Pythia: 7.9%, 22.7%; 340
    // records: 7.8%, 22.3%, TPU ranks waiting for no straggler; 2026-11-28: 7.7%,
    // 22.6%, with the attention ramp at s / cp; before it 8.6%,
    // 22.7%; before MT-NLG's framework was corrected 8.7%, 23.3%; 332 records: 9.2%, 24.4%; 2026-11-27, 306
    // records: 9.1%, 24.1%): the issue's median (8%) and p90 (20%), held here.
    CHECK(median <= 0.08);
    CHECK(p90 <= 0.20);
    // The signed median of every slice of ten runs or more within +-3% (the issue's bound). Plain PyTorch's came
    // within it (-3.2% to +0.4%) once TinyLlama's lit-gpt runs made it three sources, so no source is priced by one
    // other's fit alone (2026-12-02); PyTorch FSDP's (-3.2% to -1.9%) once a plain MLP's GELU was priced as one
    // kernel; DeepSpeed's (+3.4% to +2.6%) once its 2021 ZeRO-3 gathers were priced as they ran.
    int slices = 0;
    for (const auto& slice : cv.at("slices")) {
        if (slice.at("count").get<int>() < 10 || (slice.at("slice") != "stack" && slice.at("slice") != "chip" && slice.at("slice") != "model"))
            continue;
        ++slices;
        CAPTURE(slice.at("key"));
        CHECK(std::abs(slice.at("signed_median_error").get<double>()) <= 0.03);
    }
    CHECK(slices >= 10);
    // The held-out TPU runs, priced from GPU stacks' pooled fit: +0.9% since a chip keeps its slice of the residual
    // stream (2026-11-30, twenty-first session); -0.3% since their slices, not their chips,
    // wait for the slowest (2026-11-30); +3.7% since that fit holds the per-layer
    // share and the per-step cost again (2026-11-30, with OLMo-core's runs; -10.6% with them and all four freed),
    // +0.2% while it freed all four (2026-11-30), +2.3% while it took a per-step cost and no straggler spread, +3.7% with a deterministic chip's
    // ranks waiting for no straggler, -13.2% while they waited as GPUs' do (the issue asks +-3% per slice).
    // The loop above holds them to +-3%; here, that they are a slice of their own.
    const auto& all_slices = cv.at("slices");
    CHECK(std::count_if(all_slices.begin(), all_slices.end(), [](const auto& s) { return s.at("slice") == "chip" && s.at("key") == "tpu"; }) == 1);
    // 90% intervals drawn from the other held-out runs cover 85-95% of the runs (the issue's bound).
    const auto& runs = cv.at("interval_coverage").at("other_runs");
    const double coverage = runs.at("covered").get<double>() / runs.at("with_interval").get<double>();
    CHECK(runs.at("with_interval").get<int>() >= 250);
    CHECK(coverage >= 0.85);
    CHECK(coverage <= 0.95);
    // Every record's held-out error is in the shipped residuals file, as this binary computes it.
    const std::vector<Residual> shipped = load_residuals(residuals_path(test::source_dir()));
    REQUIRE(shipped.size() == cv.at("records").size());
    for (std::size_t i = 0; i < shipped.size(); ++i) {
        const auto& r = cv.at("records")[i];
        CAPTURE(shipped[i].id);
        CHECK(shipped[i].id == r.at("id").get<std::string>());
        CHECK(shipped[i].error == doctest::Approx(r.at("error").get<double>()).scale(0).epsilon(1e-9));
        CHECK(shipped[i].kind.params == r.at("parameters").get<std::string>());
    }
}

TEST_CASE("cross-validation: float8's gain over bf16 on OLMo-core's paired runs, held out, is the table's") {
    if (!kWholeDevSet) return;
    // OLMo-core's README gives each shape's tokens/s in bf16 and with torchao's float8 linears, the rest of the run
    // the same. Held out, its stack is priced by its family's fit; the ratio of the two predictions, over the ratio
    // of the two measurements, is (1 + error fp8) / (1 + error bf16).
    std::map<std::string, std::map<std::string, double>> errors;  // size -> precision -> held-out error
    for (const auto& r : dev_cross_validation().at("records")) {
        if (r.at("source") != "allenai_olmo_core_readme_2024-11") continue;
        const std::string id = r.at("id");  // olmo-core-<size>-h100-8gpu-s4096-<precision>-<commit>
        const std::string size = id.substr(10, id.find('-', 10) - 10);
        errors[size][id.find("-fp8-") != std::string::npos ? "fp8" : "bf16"] = r.at("error").get<double>();
    }
    REQUIRE(errors.size() == 4);
    std::vector<double> misses;
    for (const auto& [size, pair] : errors) {
        CAPTURE(size);
        REQUIRE(pair.size() == 2);
        misses.push_back(std::abs((1.0 + pair.at("fp8")) / (1.0 + pair.at("bf16")) - 1.0));
    }
    std::sort(misses.begin(), misses.end());
    // 2026-11-30: 1B -1.5%, 7B +0.7%, 8B +0.2%, 13B +12.7% (at 256 micro-batches a step the 13B's float8 run is
    // bound by FSDP's collectives, which the family's fit prices at the full link rate).
    CHECK(misses[2] <= 0.03);  // three of the four
    CHECK(misses.back() <= 0.15);
}

TEST_CASE("cross-validation: a stack without records runs at its family's or the pooled fit, never at zero") {
    if (!kWholeDevSet) return;
    const nlohmann::json& cv = dev_cross_validation();
    std::set<std::string> with_records;
    for (const auto& [name, fit] : cv.at("fits").items()) with_records.insert(name);
    int checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "stacks")) {
        const nlohmann::json stack = test::read_json(entry.path());
        const std::string name = stack.at("name");
        if (with_records.count(name) || name == "vllm" || name == "tensorrt-llm") continue;  // serving stacks train nothing
        CAPTURE(name);
        const nlohmann::json& fitted = stack.at("fitted");
        REQUIRE(fitted.contains("pooled"));
        const std::string family = stack.value("family", name);
        const bool by_family = fitted.at("pooled") == "family";
        CHECK(by_family == cv.at("family_fits").contains(family));
        const nlohmann::json& fit = by_family ? cv.at("family_fits").at(family) : cv.at("pooled");
        CHECK(fitted.at("layer_overhead_fraction").get<double>() == doctest::Approx(fit.at("layer_overhead_fraction").get<double>()));
        CHECK(fitted.at("per_step_overhead_s").get<double>() == doctest::Approx(fit.at("per_step_overhead_s").get<double>()));
        CHECK(fitted.at("rank_time_cv").get<double>() == doctest::Approx(fit.at("rank_time_cv").get<double>()));
        CHECK(fitted.value("sharded_comm_efficiency", 1.0) == doctest::Approx(fit.at("sharded_comm_efficiency").get<double>()));
        // Not the zero overhead of a stack nobody measured.
        CHECK(fitted.at("per_step_overhead_s").get<double>() + fitted.at("layer_overhead_fraction").get<double>() +
                  fitted.at("rank_time_cv").get<double>() > 0.0);
        ++checked;
    }
    CHECK(checked >= 3);  // torchtitan, pytorch-compile, pytorch-eager
}

TEST_CASE("cross-validation refuses what it cannot hold out: one source, or a source of one record") {
    const std::string one_source = dev_subset("one-source", [](const nlohmann::json& r) { return r.at("source").at("key") == "narayanan2021_table1"; });
    test::expect_refusal("validate " + one_source + " --cross-validate", {"--cross-validate", "at least two sources"});
    bool taken = false;
    const std::string single = dev_subset("single-record", [&](const nlohmann::json& r) {
        const std::string key = r.at("source").at("key");
        if (key == "narayanan2021_table1") return true;
        if (key != "nemo_perf_summary_24.07" || taken) return false;
        return taken = true;
    });
    test::expect_refusal("validate " + single + " --cross-validate", {"--cross-validate", "nemo_perf_summary_24.07", "single record"});
    test::expect_refusal("validate " + one_source + " --write-residuals x.json", {"--write-residuals", "--cross-validate"});
    test::expect_refusal("validate " + one_source + " --hold rank_time_cv", {"--hold", "--cross-validate"});
}

TEST_CASE("intervals: train and search train give one from held-out runs like the job, or say why not") {
    auto result = test::run_ridgeline("train --model llama3-70b --hardware dgx-h100 --chips 64 --tp 8 --global-batch-seqs 64 --json");
    REQUIRE(result.exit_code == 0);
    const nlohmann::json train = nlohmann::json::parse(result.out);
    const nlohmann::json& interval = train.at("step_time_interval");
    REQUIRE(interval.at("available") == true);
    CHECK(interval.at("held_out_runs").get<int>() >= 5);
    CHECK(interval.at("low_s").get<double>() <= interval.at("high_s").get<double>());
    CHECK(interval.at("like").get<std::string>().find("hopper") != std::string::npos);
    result = test::run_ridgeline("train --model llama3-70b --hardware dgx-h100 --chips 64 --tp 8 --global-batch-seqs 64");
    CHECK(result.out.find("held-out runs like it") != std::string::npos);
    // An MoE model on a stack priced by the pooled fit: no held-out MoE run was priced so.
    result = test::run_ridgeline("train --model mixtral-8x7b --hardware dgx-h100 --chips 64 --ep 8 --global-batch-seqs 64 --stack pytorch-eager --json");
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const nlohmann::json none = nlohmann::json::parse(result.out).at("step_time_interval");
    CHECK(none.at("available") == false);
    CHECK(none.at("why_none").get<std::string>().find("fewer than 19") != std::string::npos);
    result = test::run_ridgeline("search train --model llama3-8b --hardware dgx-h100 --chips 16 --global-batch-seqs 64 --top 2 --json");
    REQUIRE(result.exit_code == 0);
    const nlohmann::json search = nlohmann::json::parse(result.out);
    for (const auto& top : search.at("top")) CHECK(top.at("report").contains("step_time_interval"));
    // Over a range of counts, each count's time to train takes its best plan's step-time factors
    // (the same steps, each as much slower or faster), as the one-count search reports them.
    result = test::run_ridgeline("search train --model llama3-8b --hardware dgx-h100 --chips 8..16 --global-batch-seqs 64 --train-tokens 1e10 --json");
    REQUIRE(result.exit_code == 0);
    const nlohmann::json scaling = nlohmann::json::parse(result.out);
    for (const auto& point : scaling.at("points")) {
        const auto chips = point.at("chips").get<int>();
        CAPTURE(chips);
        const auto one = test::run_ridgeline("search train --model llama3-8b --hardware dgx-h100 --chips " + std::to_string(chips) +
                                             " --global-batch-seqs 64 --top 1 --json");
        REQUIRE(one.exit_code == 0);
        const nlohmann::json top = nlohmann::json::parse(one.out);
        const nlohmann::json& report = top.at("top").at(0).at("report");
        const nlohmann::json& step = report.at("step_time_interval");
        const nlohmann::json& time = point.at("time_to_train_interval");
        REQUIRE(step.at("available") == true);
        REQUIRE(time.at("available") == true);
        const double step_s = report.at("step_time_s").get<double>(), train_s = point.at("time_to_train_s").get<double>();
        CHECK(time.at("low_s").get<double>() / train_s == doctest::Approx(step.at("low_s").get<double>() / step_s).epsilon(1e-9));
        CHECK(time.at("high_s").get<double>() / train_s == doctest::Approx(step.at("high_s").get<double>() / step_s).epsilon(1e-9));
        CHECK(time.at("held_out_runs") == step.at("held_out_runs"));
    }
}

TEST_CASE("bad input: a residuals file or a stack's pooled or borrowed origin out of range names the field") {
    const auto dir = test::scratch_dir("residuals");
    std::ofstream(dir / "bad.json") << R"({"schema": "ridgeline.residuals/1", "origin": "test", "residuals": [)"
                                    << R"({"id": "a", "source": "s", "error": -2, "stack_family": "megatron", "chip_family": "hopper",)"
                                    << R"( "moe": false, "chips": 8, "parameters": "own"}]})";
    CHECK_THROWS_WITH_AS(load_residuals(dir / "bad.json"), doctest::Contains("residuals[0].error"), InputError);
    std::ofstream(dir / "quantity.json") << R"({"schema": "ridgeline.residuals/1", "origin": "test", "residuals": [)"
                                         << R"({"id": "a", "source": "s", "error": 0.1, "stack_family": "nim", "chip_family": "hopper",)"
                                         << R"( "moe": false, "chips": 2, "parameters": "none", "quantity": "ttft_p75"}]})";
    CHECK_THROWS_WITH_AS(load_residuals(dir / "quantity.json"), doctest::Contains("residuals[0].quantity"), InputError);
    nlohmann::json stack = test::read_json(test::source_dir() / "stacks" / "torchtitan.json");
    stack["fitted"]["pooled"] = "everyone";
    std::ofstream(dir / "stack.json") << stack.dump();
    test::expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 8 --stack " + (dir / "stack.json").string(),
                         {"stack.json", "fitted.pooled"});
    // A borrowed parameter names a value the fit gives, taken from its family or the pool.
    stack = test::read_json(test::source_dir() / "stacks" / "nemo.json");
    stack["fitted"]["borrowed"] = {{"sharded_comm_efficiency", "neighbours"}};
    std::ofstream(dir / "borrow-from.json") << stack.dump();
    test::expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 8 --stack " + (dir / "borrow-from.json").string(),
                         {"borrow-from.json", "fitted.borrowed.sharded_comm_efficiency"});
    stack["fitted"].erase("sharded_comm_efficiency");
    stack["fitted"]["borrowed"] = {{"sharded_comm_efficiency", "pooled"}};
    std::ofstream(dir / "borrow-absent.json") << stack.dump();
    test::expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 8 --stack " + (dir / "borrow-absent.json").string(),
                         {"borrow-absent.json", "fitted.borrowed.sharded_comm_efficiency"});
}

TEST_CASE("dev set: the NeMo 25.02 and 25.04 records are the transcribed performance-summary rows, and a row's two rates agree") {
    const nlohmann::json table = test::read_json(test::data_file("runs/tables/nemo-perf-summary.json"));
    const nlohmann::json dev_set = test::read_json(kDevSet);
    std::map<std::string, const nlohmann::json*> by_key;  // "container/system/model" -> record
    for (const auto& r : dev_set.at("records")) {
        const std::string key = r.at("source").at("key").get<std::string>();
        if (!key.starts_with("nemo_perf_summary_25.")) continue;
        const std::string system = r.at("hardware").at("accelerator") == "b200" ? "DGX-B200" : r.at("hardware").at("accelerator") == "gb200" ? "DGX-GB200" : "DGX-H100";
        by_key[key.substr(18) + "/" + system + "/" + r.at("model").at("name").get<std::string>()] = &r;
    }
    const std::map<std::string, std::string> names = {
        {"GPT3-175B", "GPT-3 175B (NeMo config)"}, {"LLAMA3-8B", "Llama 3/3.1 8B"}, {"LLAMA3-70B", "Llama 3/3.1 70B"},
        {"LLAMA3-405B", "Llama 3/3.1 405B"}, {"Nemotron-15B", "Nemotron-4 15B"}, {"Nemotron-340B", "Nemotron-4 340B"},
        {"Mixtral-8x7B", "Mixtral 8x7B"}, {"Mixtral-8x22B", "Mixtral 8x22B"}};
    const auto& rows = table.at("rows");
    CHECK(rows.size() == by_key.size());
    for (const auto& row : rows) {
        const std::string key = row.at("container").get<std::string>() + "/" + row.at("system").get<std::string>() + "/" +
                                names.at(row.at("model").get<std::string>());
        INFO(key);
        REQUIRE(by_key.count(key) == 1);
        const nlohmann::json& r = *by_key.at(key);
        const double gpus = row.at("gpus").get<double>();
        CHECK(r.at("hardware").at("count").get<double>() == gpus);
        CHECK(r.at("measured").at("tokens_per_s").at("value").get<double>() == doctest::Approx(row.at("tokens_per_s_per_gpu").get<double>() * gpus));
        for (const char* axis : {"tp", "pp", "cp", "ep"}) CHECK(r.at("plan").at(axis) == row.at(axis));
        CHECK(r.at("plan").at("dp").get<double>() == gpus / (row.at("tp").get<double>() * row.at("pp").get<double>() * row.at("cp").get<double>()));
        // The batch a row states, unless its columns are printed swapped (the record says so).
        const double gbs = row.contains("batch_correction") ? row.at("batch_correction").at("gbs").get<double>() : row.at("gbs").get<double>();
        CHECK(r.at("workload").at("global_batch_tokens").get<double>() == gbs * row.at("seq_len").get<double>());
    }
    // Llama 3 8B on DGX-B200 (25.02): its matmul parameters worked by hand from Meta's config, 32 layers x
    // (4096 x (4096 + 2 x 1024 + 4096) + 3 x 4096 x 14336) + 4096 x 128256 = 7,504,658,432; 6N plus attention
    // 12 x 32 x 8192 x 4096 = 57.91 GFLOP a token; at the row's 26,006 tokens/s/GPU that is its 1,506 TFLOP/s.
    const double flops_per_token = 6.0 * 7504658432.0 + 12.0 * 32 * 8192 * 4096;
    CHECK(flops_per_token * 26006 / 1e12 == doctest::Approx(1506).scale(0).epsilon(0.002));
    const nlohmann::json& llama8b = *by_key.at("25.02/DGX-B200/Llama 3/3.1 8B");
    CHECK(llama8b.at("measured").at("tokens_per_s").at("value").get<double>() * flops_per_token / 8 / 1e12 == doctest::Approx(1506).scale(0).epsilon(0.002));
}

// Llama 3 405B on 8,192 H100s (the paper's Table 4): 16 stages, interleaved at a depth the paper does
// not give, 32 micro-batches a replica (2,048 sequences over 64 replicas, one each). Priced without
// interleaving, the 1F1B bubble adds (p - 1) / m = 15/32 of the compute; at the shallowest
// interleaving, two virtual stages a rank, 15 / (32 x 2). The step shrinks by about
// (1 + 15/32) / (1 + 15/64) = 1.190, less what the extra stage crossings cost.
TEST_CASE("dev set: a record whose pipeline is interleaved at an unstated depth is priced at the shallowest interleaving") {
    auto records = load_run_records(kDevSet, test::source_dir());
    const auto it = std::find_if(records.begin(), records.end(), [](const RunRecord& r) { return r.id == "llama3-405b-h100-8192gpu-tp8cp1pp16dp64-s8192"; });
    REQUIRE(it != records.end());
    REQUIRE(it->pipeline_interleaved);
    const RecordResult interleaved = predict_record(*it, test::source_dir());
    it->pipeline_interleaved = false;
    const RecordResult flat = predict_record(*it, test::source_dir());
    REQUIRE(interleaved.ok);
    REQUIRE(flat.ok);
    const double speedup = interleaved.predicted_tokens_per_s / flat.predicted_tokens_per_s;
    CHECK(speedup == doctest::Approx(1.190).scale(0).epsilon(0.03));
    // What the record may not say: interleaved with a stated depth, or without a pipeline.
    const auto refused = [](const std::string& field, const nlohmann::json& value) {
        nlohmann::json doc = test::read_json(kDevSet);
        for (auto& r : doc.at("records"))
            if (r.at("id") == "llama3-405b-h100-8192gpu-tp8cp1pp16dp64-s8192") r.at("plan")[field] = value;
        const auto path = test::scratch_dir("interleaved") / (field + ".json");
        std::ofstream(path) << doc.dump();
        CHECK_THROWS_WITH_AS(load_run_records(path, test::source_dir()), doctest::Contains("pipeline_interleaved"), InputError);
    };
    refused("vpp", 2);
    refused("pp", 1);
}

// LLM Foundry's benchmark README holds five tables from three campaigns, read from the repository's
// history (mosaicml/llm-foundry): the A100 40GB rows are unchanged since 300cc5c58 (2023-05-03), bf16
// with Composer's PURE mixed precision; b2a43a147 (2023-10-19) measured the A100 80GB table again but
// for its two 70b rows (their numbers and PURE unchanged) and added the two H100 tables, all amp_bf16
// or amp_fp8 under DEFAULT; 5e85bd62d (2024-01-06) added the '>= 128 GPUs' H100 table. A source is
// one campaign, as NeMo's releases are, so one held out is predicted by fits that never saw its
// software or its cluster.
TEST_CASE("dev set: LLM Foundry's records are keyed by the campaign that published their table") {
    const nlohmann::json dev_set = test::read_json(kDevSet);
    std::map<std::string, int> per_campaign;
    for (const auto& r : dev_set.at("records")) {
        if (r.at("software").at("framework") != "llm-foundry") continue;
        const std::string location = r.at("source").at("location").get<std::string>();
        const bool a100_80gb_70b = location.starts_with("README section 'A100 80GB") && r.at("id").get<std::string>().starts_with("mosaic-70b-");
        const std::string campaign = location.starts_with("README section 'A100 40GB") || a100_80gb_70b ? "2023-05"
                                     : location.starts_with("README section 'H100 80GB BF16 (Large Scale")             ? "2024-01"
                                                                                                      : "2023-10";
        CAPTURE(r.at("id"));
        CHECK(r.at("source").at("key") == "mosaicml_llm_foundry_benchmarks_" + campaign);
        // The 2023-05 campaign ran PURE (gradients reduced in bf16), the later two DEFAULT (fp32).
        CHECK(r.at("plan").at("gradient_reduce_dtype") == (campaign == "2023-05" ? "bf16" : "fp32"));
        ++per_campaign[campaign];
    }
    // The tables' rows of the 1B model and up, counted in the README at 5e85bd62d: A100 40GB 45; A100 80GB 36
    // (two of them 70b), H100 BF16 and FP8 together 50; >= 128 GPUs 18.
    CHECK(per_campaign == std::map<std::string, int>{{"2023-05", 45 + 2}, {"2023-10", 36 - 2 + 50}, {"2024-01", 18}});
}
