// Recomputation policies as data: what each keeps and repeats follows from the modules its file
// names, through `train`; bad policy files and names are refused naming the field.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/step_model.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "model/recompute_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "test_support.hpp"
#include "validation/run_record.hpp"
#include "validation/validate.hpp"

using namespace ridgeline;

namespace {

RecomputePolicy policy(const std::string& name) { return resolve_recompute(name, test::source_dir(), kRequest, "recompute"); }

struct Run {
    TrainingReport report;
    LayoutCosts layout;
};

// LLaMA-3 70B on two DGX H100 nodes at tp 8, pp 2, seq 8192, one sequence per micro-batch.
Run llama70b(const std::string& recompute) {
    TrainingSetup setup;
    setup.model = resolve_model("llama3-70b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-h100", test::source_dir());
    setup.chips = 16;
    setup.seq_len = 8192;
    setup.global_batch_seqs = 8;
    setup.plan.tp = 8;
    setup.plan.pp = 2;
    setup.plan.sequence_parallel = true;
    setup.plan.recompute = policy(recompute);
    const TrainingScenario scenario = build_training_scenario(setup, test::source_dir(), "test");
    return {simulate_training(scenario), cost_layout(scenario, derive_layout_work(scenario), nullptr).costs};
}

std::string write_policy(const std::string& name, const nlohmann::json& document) {
    const auto path = test::scratch_dir("recompute") / name;
    std::ofstream(path) << document.dump();
    return path.string();
}

}  // namespace

TEST_CASE("LLaMA-3 70B at tp 8, pp 2, seq 8192: activation memory strictly none > selective > full") {
    const Run none = llama70b("none"), selective = llama70b("selective"), full = llama70b("full");
    CHECK(none.report.memory.activations_bytes > selective.report.memory.activations_bytes);
    CHECK(selective.report.memory.activations_bytes > full.report.memory.activations_bytes);
    // selective drops the fused kernel's fp32 log-sum-exp: 64 heads / tp 8 x 4 bytes per token of
    // the micro-batch, per layer, over the 40 layers of a stage and its 2 in-flight micro-batches (1F1B).
    CHECK(none.report.memory.activations_bytes - selective.report.memory.activations_bytes ==
          doctest::Approx(8.0 * 4 * 8192 * 40 * 2));
    // full keeps the layer input only: 8192 tokens x 8192 wide / tp 8 (sequence parallel), bf16.
    CHECK(full.report.memory.activations_bytes == doctest::Approx(8192.0 * 8192 / 8 * 2 * 40 * 2));
}

TEST_CASE("recomputation time is the forward time of the modules a policy names") {
    const Run none = llama70b("none"), selective = llama70b("selective"), full = llama70b("full"),
              lean = llama70b("megatron-lean"), op = llama70b("torchtitan-op");
    const LayoutCosts& l = none.layout;
    CHECK(none.report.per_layer.recompute_s == 0);
    CHECK(selective.report.per_layer.recompute_s == doctest::Approx(l.attention_fwd_s));
    CHECK(full.report.per_layer.recompute_s == doctest::Approx(forward_compute_s(l)));
    CHECK(op.report.per_layer.recompute_s == doctest::Approx(l.norm_fwd_s + l.activation_fwd_s));
    CHECK(lean.report.per_layer.recompute_s == doctest::Approx(l.attention_fwd_s + l.norm_fwd_s + l.activation_fwd_s));
    CHECK(l.norm_fwd_s > 0);
    CHECK(l.activation_fwd_s > 0);
    // Hardware FLOPs: only the attention core's FLOPs are repeated by selective, the whole forward by full.
    CHECK(none.report.hfu == doctest::Approx(none.report.mfu));
    CHECK(full.report.hfu / full.report.mfu == doctest::Approx(4.0 / 3.0));
    CHECK(selective.report.hfu > selective.report.mfu);
    // Dropping more never keeps more.
    CHECK(lean.report.memory.activations_bytes < selective.report.memory.activations_bytes);
    CHECK(op.report.memory.activations_bytes < none.report.memory.activations_bytes);
}

TEST_CASE("a policy naming an unknown module, or an unknown policy name, is refused naming the field") {
    nlohmann::json file = test::read_json(test::source_dir() / "recompute" / "megatron-lean.json");
    file["recompute"] = {"core_attention", "moe_router"};
    const std::string path = write_policy("unknown-module.json", file);
    try {
        (void)resolve_recompute(path, test::source_dir(), kRequest, "recompute");
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(e.origin() == path);
        CHECK(e.field() == "recompute[1]");
        CHECK(std::string(e.what()).find("moe_router") != std::string::npos);
    }
    const test::CommandResult cli =
        test::run_ridgeline("train --model llama3-8b --hardware dgx-h100 --chips 8 --recompute everything");
    CHECK(cli.exit_code == 2);
    CHECK(cli.err.find("--recompute") != std::string::npos);
    CHECK(cli.err.find("megatron-lean") != std::string::npos);  // the known policies are listed
}

TEST_CASE("run records may name Megatron-Core's recompute modules: layernorm and moe recompute the norms and the experts' up-projection and activation") {
    const auto records = load_run_records(test::data_file("runs/published-runs-dev.json"), test::source_dir());
    const auto it = std::find_if(records.begin(), records.end(), [](const RunRecord& r) { return r.id == "moezoo-qwen3-235b-h100-longctx-64k"; });
    REQUIRE(it != records.end());
    CHECK(it->recompute_modules == std::vector<std::string>{"layernorm", "moe"});
    const TrainingSetup setup = record_training_setup(*it, test::source_dir());
    using M = RecomputeModule;
    const RecomputeModules expected = static_cast<unsigned>(M::norms) | static_cast<unsigned>(M::mlp_up) | static_cast<unsigned>(M::activation);
    CHECK(setup.plan.recompute.modules == expected);
    CHECK(!recomputes(setup.plan.recompute.modules, M::core_attention));  // not Megatron's default core_attn here
    CHECK(megatron_recompute_module("core_attn") == static_cast<unsigned>(M::core_attention));
    CHECK(!megatron_recompute_module("everything"));
}

TEST_CASE("run records may name the policy their launch script names: MaxText's 2023 v5p scripts ran remat_policy=minimal") {
    const auto records = load_run_records(test::data_file("runs/published-runs-dev.json"), test::source_dir());
    const auto it = std::find_if(records.begin(), records.end(), [](const RunRecord& r) { return r.id == "maxtext-v5p-32b-1x-v5p-128"; });
    REQUIRE(it != records.end());
    CHECK(it->recompute == "selective");
    REQUIRE(it->recompute_policy == std::optional<std::string>("maxtext-minimal"));
    // checkpoint_dots_with_no_batch_dims keeps the weight matmuls' outputs and nothing else: the attention core
    // (batched dots), its output, the norms and the activation function run again.
    using M = RecomputeModule;
    const RecomputeModules minimal = static_cast<unsigned>(M::core_attention) | static_cast<unsigned>(M::attention_output) |
                                     static_cast<unsigned>(M::norms) | static_cast<unsigned>(M::activation);
    CHECK(record_training_setup(*it, test::source_dir()).plan.recompute.modules == minimal);
    RunRecord generic = *it;
    generic.recompute_policy.reset();
    CHECK(record_training_setup(generic, test::source_dir()).plan.recompute.modules != minimal);
}

TEST_CASE("selective recomputation with sequence parallelism against full recomputation: Korthikanti et al. 2022's measured speed-ups") {
    // Table 5 of arXiv 2205.05198 (Megatron-LM on A100s, tensor 8): iteration times with full recomputation
    // and with selective recomputation + sequence parallelism. The predicted ratio of the two, on the same
    // runs, must be the measured one within 2%: what the policies keep and repeat, not a fitted overhead.
    const auto result = test::run_ridgeline("validate " + test::data_file("runs/published-runs-dev.json").string() + " --source korthikanti2022 --json");
    REQUIRE(result.exit_code == 0);
    std::map<std::string, double> predicted;
    const nlohmann::json doc = nlohmann::json::parse(result.out);
    for (const auto& r : doc.at("records")) predicted[r.at("id").get<std::string>()] = r.at("predicted_tokens_per_s").get<double>();
    const std::vector<std::tuple<std::string, double, double>> table5 = {
        {"22B-8gpu", 1.42, 1.10}, {"175B-64gpu", 18.13, 13.75}, {"530B-280gpu", 49.05, 37.83}, {"1T-512gpu", 94.42, 71.49}};
    for (const auto& [run, full_s, selective_s] : table5) {
        INFO(run);
        REQUIRE(predicted.count("korthikanti22-" + run + "-full") == 1);
        const double speedup = predicted.at("korthikanti22-" + run + "-selective-sp") / predicted.at("korthikanti22-" + run + "-full");
        CHECK(speedup == doctest::Approx(full_s / selective_s).scale(0).epsilon(0.02));
    }
}
