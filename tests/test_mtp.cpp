// DeepSeek-V3's multi-token prediction: its parameters (a block, a 2D -> D projection and three
// norms per module) and the extra block and output head it puts on the last pipeline stage.
#include <doctest/doctest.h>

#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "model/transformer_math.hpp"
#include "scenario/training_setup.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

double component_s(const TrainingReport& report, const std::string& name) {
    for (const StepComponent& c : report.components)
        if (c.name == name) return c.time_s;
    FAIL("no component " << name);
    return 0;
}

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
    CHECK(p.mtp_module == doctest::Approx(*shipped.published_mtp_params).epsilon(0.015));
    // A block of the model plus the projection 2 x 7168 x 7168 and three RMSNorms of 7168.
    CHECK(p.mtp_module == doctest::Approx(p.attention_per_layer + p.moe_layer_total + 2.0 * 7168 + 2.0 * 7168 * 7168 + 3.0 * 7168));
    // The published total leaves it out.
    CHECK(p.total == doctest::Approx(*shipped.published_params).epsilon(0.001));
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

    // A last stage two layers short absorbs one module without slowing the pipeline.
    TrainingSetup uneven = llama8b_pp2(1);
    uneven.plan.stage_layers = {17, 15};
    TrainingSetup uneven_plain = uneven;
    uneven_plain.plan.mtp_depth = 0;
    const TrainingReport a = simulate_training(build_training_scenario(uneven_plain, test::source_dir(), "test"));
    const TrainingReport b = simulate_training(build_training_scenario(uneven, test::source_dir(), "test"));
    CHECK(component_s(b, "attention") == doctest::Approx(component_s(a, "attention")));
}
