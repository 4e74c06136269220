// DeepSeek-V3's multi-token prediction: its parameters (a block, a 2D -> D projection and three
// norms per module) and the extra block and output head it puts on the last pipeline stage.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "hardware/catalog.hpp"
#include "inference/serving.hpp"
#include "model/model_catalog.hpp"
#include "model/transformer_math.hpp"
#include "scenario/training_setup.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using test::component_s;

namespace {

TrainingSetup llama8b_pp2(std::int64_t mtp_depth) {
    TrainingSetup setup;
    setup.model = resolve_model("llama3-8b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-h100", test::source_dir());
    setup.chips = 8;
    setup.seq_len = 8192;
    setup.global_batch_seqs = 64;
    setup.plan.tp = 4;
    setup.plan.pp = 2;
    setup.plan.sequence_parallel = true;
    setup.plan.mtp_depth = mtp_depth;
    return setup;
}

}  // namespace

TEST_CASE("DeepSeek-V3's MTP module holds the 11.5B unique parameters its README_WEIGHTS.md gives") {
    const ModelSpec shipped = resolve_model("deepseek-v3", test::source_dir());
    CHECK(shipped.mtp_depth == 1);
    REQUIRE(shipped.published_mtp_params);
    const ParamCounts p = count_params(shipped);
    // Published to one decimal of a billion: 11.5B is 11.45B to 11.55B, and our count is exact.
    CHECK(p.mtp_module == doctest::Approx(*shipped.published_mtp_params).scale(0).epsilon(0.015));
    // A block of the model plus the projection 2 x 7168 x 7168 and three RMSNorms of 7168.
    CHECK(p.mtp_module == doctest::Approx(p.attention_per_layer + p.moe_layer_total + 2.0 * 7168 + 2.0 * 7168 * 7168 + 3.0 * 7168));
    // The published total leaves it out.
    CHECK(p.total == doctest::Approx(*shipped.published_params).scale(0).epsilon(0.001));
    const ModelSpec hf = resolve_model(test::data_file("hf/deepseek_v3-config.json").string(), test::source_dir());
    CHECK(hf.mtp_depth == 1);
}

TEST_CASE("training with MTP: the last stage runs one more block per module, so 16 layers per stage pace as 17") {
    const TrainingReport plain = simulate_training(build_training_scenario(llama8b_pp2(0), test::source_dir(), "test"));
    const TrainingReport mtp = simulate_training(build_training_scenario(llama8b_pp2(1), test::source_dir(), "test"));
    CHECK(component_s(mtp, "attention") / component_s(plain, "attention") == doctest::Approx(17.0 / 16.0));
    CHECK(component_s(mtp, "elementwise (norms, activations)") / component_s(plain, "elementwise (norms, activations)") ==
          doctest::Approx(17.0 / 16.0));
    // The output head and its loss run once more, with the projection: more than a block's matmuls.
    CHECK(component_s(mtp, "matmuls (incl. output layer)") > component_s(plain, "matmuls (incl. output layer)") * 17.0 / 16.0);
    CHECK(mtp.memory.parameters_bytes > plain.memory.parameters_bytes);
    // The model's FLOPs (MFU's numerator) stay the main model's, as published counts do.
    CHECK(mtp.model_flops_per_token == doctest::Approx(plain.model_flops_per_token));

    // A last stage two layers short: without MTP the 17-layer stage sets the pace (the output layer
    // costs less than two layers); one module adds a block and a second pass of the output layer to
    // the last stage, which then sets it with its 16 blocks, and the step is longer.
    TrainingSetup uneven = llama8b_pp2(1);
    uneven.plan.stage_layers = {17, 15};
    TrainingSetup uneven_plain = uneven;
    uneven_plain.plan.mtp_depth = 0;
    const TrainingReport a = simulate_training(build_training_scenario(uneven_plain, test::source_dir(), "test"));
    const TrainingReport b = simulate_training(build_training_scenario(uneven, test::source_dir(), "test"));
    CHECK(component_s(a, "attention") / component_s(plain, "attention") == doctest::Approx(17.0 / 16.0));
    CHECK(component_s(b, "attention") / component_s(plain, "attention") == doctest::Approx(16.0 / 16.0));
    CHECK(b.step_time_s > a.step_time_s);
}

TEST_CASE("speculative decoding yields 1 + a + ... + a^D tokens a step") {
    CHECK(SpeculativeDecoding{1, 0.85}.tokens_per_step() == doctest::Approx(1.85));
    CHECK(SpeculativeDecoding{2, 0.8}.tokens_per_step() == doctest::Approx(1.0 + 0.8 + 0.64));
    CHECK(SpeculativeDecoding{0, 0.9}.tokens_per_step() == doctest::Approx(1.0));
}

TEST_CASE("serve with MTP drafts: a step verifies 1 + D tokens per sequence, TPOT is the step over the tokens it yields") {
    const std::string base = "serve --model deepseek-v3 --hardware dgx-h200 --chips 8 --tp 8 --batch 32 --input-len 2000 "
                             "--output-len 1000 --weights-dtype fp8 --json";
    const auto plain_run = test::run_ridgeline(base);
    const auto spec_run = test::run_ridgeline(base + " --draft-tokens 1 --acceptance 0.85");
    REQUIRE(plain_run.exit_code == 0);
    REQUIRE(spec_run.exit_code == 0);
    const nlohmann::json plain = nlohmann::json::parse(plain_run.out), spec = nlohmann::json::parse(spec_run.out);
    CHECK(spec["decode"]["tokens_per_step"].get<double>() == doctest::Approx(1.85));
    CHECK(spec["decode"]["tpot_s"].get<double>() * 1.85 == doctest::Approx(spec["decode"]["step_s"].get<double>()));
    // The verifying pass runs twice the tokens of a plain step, and the draft comes on top.
    CHECK(spec["decode"]["step_s"].get<double>() > plain["decode"]["step_s"].get<double>());
    CHECK(spec["decode"]["speculative"]["draft_s"].get<double>() > 0.0);
    // One pass of 61 layers now caches 62 layers' keys and values (the module's block has its own).
    CHECK(spec["memory"]["kv_cache_bytes"].get<double>() / plain["memory"]["kv_cache_bytes"].get<double>() == doctest::Approx(62.0 / 61.0));
    // Users see the step's tokens: 32 sequences, one step per TPOT.
    CHECK(spec["throughput"]["decode_tokens_per_s"].get<double>() == doctest::Approx(32.0 / spec["decode"]["tpot_s"].get<double>()));
}

TEST_CASE("drafts without prediction modules, more drafts than modules, or no acceptance rate: exit 2 naming the flag") {
    const std::string base = " --hardware dgx-h100 --chips 8 --tp 8 --batch 8 --input-len 512 --output-len 128";
    const auto llama = test::run_ridgeline("serve --model llama3-70b" + base + " --draft-tokens 1 --acceptance 0.8");
    CHECK(llama.exit_code == 2);
    CHECK(llama.err.find("--draft-tokens") != std::string::npos);
    const auto two = test::run_ridgeline("serve --model deepseek-v3" + base + " --weights-dtype fp8 --draft-tokens 2 --acceptance 0.8");
    CHECK(two.exit_code == 2);
    CHECK(two.err.find("mtp_depth") != std::string::npos);
    const auto no_rate = test::run_ridgeline("serve --model deepseek-v3" + base + " --weights-dtype fp8 --draft-tokens 1");
    CHECK(no_rate.exit_code == 2);
    CHECK(no_rate.err.find("acceptance") != std::string::npos);
    const auto above = test::run_ridgeline("serve --model deepseek-v3" + base + " --weights-dtype fp8 --draft-tokens 1 --acceptance 1.5");
    CHECK(above.exit_code == 2);
    CHECK(above.err.find("--acceptance") != std::string::npos);
}

TEST_CASE("fp8 training keeps the output layer in bf16 (Megatron-Core's output_layer is not a Transformer Engine module)") {
    TrainingSetup setup = llama8b_pp2(0);
    setup.plan.pp = 1;
    setup.plan.precision = Dtype::fp8;
    const TrainingScenario fp8 = build_training_scenario(setup, test::source_dir(), "test");
    setup.plan.precision = Dtype::bf16;
    const TrainingScenario bf16 = build_training_scenario(setup, test::source_dir(), "test");
    const LayoutCosts a = cost_layout(fp8, derive_layout_work(fp8), nullptr).costs;
    const LayoutCosts b = cost_layout(bf16, derive_layout_work(bf16), nullptr).costs;
    CHECK(a.logits_s == doctest::Approx(b.logits_s));  // the same GEMMs and loss either way
    CHECK(a.matmul_fwd_s < 0.75 * b.matmul_fwd_s);     // while the blocks' GEMMs run at the fp8 rate
    // A stack that quantises the output layer too prices it at the fp8 rate.
    TrainingScenario quantised = fp8;
    quantised.stack.fp8_output_layer = true;
    CHECK(cost_layout(quantised, derive_layout_work(quantised), nullptr).costs.logits_s < 0.75 * b.logits_s);
}
