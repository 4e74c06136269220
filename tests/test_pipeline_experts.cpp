// Layouts the run-record format defines: interleaved pipelines over layers that do not divide
// evenly, and expert parallelism folded over the tensor and context ranks (Megatron-Core).
#include <doctest/doctest.h>

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "test_support.hpp"
#include "validation/run_record.hpp"
#include "validation/validate.hpp"

using namespace ridgeline;
using test::component_s;

namespace {

TrainingSetup llama405b_pp8(std::int64_t vpp) {
    TrainingSetup setup;
    setup.model = resolve_model("llama3-405b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-h100", test::source_dir());
    setup.chips = 64;
    setup.seq_len = 8192;
    setup.global_batch_seqs = 32;
    setup.plan.tp = 8;
    setup.plan.pp = 8;
    setup.plan.vpp = vpp;
    setup.plan.sequence_parallel = true;
    setup.plan.stage_layers = balanced_stage_layers(126, 8);
    return setup;
}

TrainingSetup qwen3_moe(std::int64_t tp, std::int64_t cp, std::int64_t ep, std::int64_t etp) {
    TrainingSetup setup;
    setup.model = resolve_model("qwen3-235b-a22b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-h100", test::source_dir());
    setup.chips = 256;
    setup.seq_len = 4096;
    setup.global_batch_seqs = 2048;
    setup.plan.tp = tp;
    setup.plan.cp = cp;
    setup.plan.pp = 8;
    setup.plan.ep = ep;
    setup.plan.etp = etp;
    setup.plan.sequence_parallel = true;
    setup.plan.fold_experts = true;
    setup.plan.stage_layers = balanced_stage_layers(94, 8);
    return setup;
}

const DerivedCollective& dispatch(const LayerWork& work) {
    const auto it = std::find_if(work.collectives.begin(), work.collectives.end(),
                                 [](const DerivedCollective& c) { return c.what == "experts: all-to-all dispatch"; });
    REQUIRE(it != work.collectives.end());
    return *it;
}

}  // namespace

TEST_CASE("an uneven split leaves the first and last stages a layer short, as Megatron-Core's does") {
    CHECK(balanced_stage_layers(126, 8) == std::vector<std::int64_t>{15, 16, 16, 16, 16, 16, 16, 15});
    CHECK(balanced_stage_layers(94, 8) == std::vector<std::int64_t>{11, 12, 12, 12, 12, 12, 12, 11});
    CHECK(balanced_stage_layers(30, 4) == std::vector<std::int64_t>{7, 8, 8, 7});
    CHECK(balanced_stage_layers(13, 4) == std::vector<std::int64_t>{3, 3, 4, 3});
    CHECK(balanced_stage_layers(32, 4) == std::vector<std::int64_t>{8, 8, 8, 8});
}

TEST_CASE("LLaMA-3 405B's 126 layers at pp 8 interleave 8 ways: the bubble is (pp - 1) / vpp stage-chunks, 8x smaller") {
    const TrainingReport one = simulate_training(build_training_scenario(llama405b_pp8(1), test::source_dir(), "test"));
    const TrainingReport eight = simulate_training(build_training_scenario(llama405b_pp8(8), test::source_dir(), "test"));
    const double bubble_one = component_s(one, "pipeline bubble"), bubble_eight = component_s(eight, "pipeline bubble");
    CHECK(bubble_one / bubble_eight == doctest::Approx(8.0));
    // 32 micro-batches: 7 / (32 + 7) of the step without interleaving, 7/8 / (32 + 7/8) with it.
    CHECK(bubble_one / one.step_time_s == doctest::Approx(7.0 / 39.0).scale(0).epsilon(0.02));
    CHECK(bubble_eight / eight.step_time_s == doctest::Approx(0.875 / 32.875).scale(0).epsilon(0.02));
    // Every virtual stage needs a layer: 16 chunks of a 15-layer stage do not exist.
    TrainingSetup too_many = llama405b_pp8(16);
    CHECK_THROWS_AS((void)build_training_scenario(too_many, test::source_dir(), "test"), InputError);
}

TEST_CASE("folded expert parallelism: ep 32 over tensor 2 and data 16, each rank holding 4 of 128 experts") {
    const TrainingScenario scenario = build_training_scenario(qwen3_moe(2, 1, 32, 1), test::source_dir(), "test");
    CHECK(scenario.plan.size(PlanAxis::expert) == 16);
    CHECK(scenario.plan.size(PlanAxis::data) == 1);
    const LayoutWork work = derive_layout_work(scenario);
    const DerivedCollective& a2a = dispatch(work.moe);
    CHECK(std::find(a2a.axes.begin(), a2a.axes.end(), "tensor") != a2a.axes.end());
    CHECK(axes_size(a2a.axes, scenario.plan.axes) == 32);
    const auto experts = std::find_if(work.moe.matmuls.begin(), work.moe.matmuls.end(),
                                      [](const DerivedMatmul& m) { return m.name == "experts_in"; });
    REQUIRE(experts != work.moe.matmuls.end());
    CHECK(experts->instances == doctest::Approx(4.0));
    // Whole experts on each rank (etp 1): gate and up of width 2 x 1536 over d_model 4096.
    CHECK(experts->weight_elements == doctest::Approx(4.0 * 4096 * 2 * 1536));

    // With experts split over tensor (etp = tp), ep folds over context first, then data.
    const TrainingScenario context = build_training_scenario(qwen3_moe(4, 2, 8, 0), test::source_dir(), "test");
    CHECK(context.plan.size(PlanAxis::expert) == 4);
    const LayoutWork context_work = derive_layout_work(context);
    const DerivedCollective& over_context = dispatch(context_work.moe);
    CHECK(std::find(over_context.axes.begin(), over_context.axes.end(), "context") != over_context.axes.end());
    CHECK(axes_size(over_context.axes, context.plan.axes) == 8);
}

TEST_CASE("folding that would take a share of an axis it does not divide, or tensor ranks without their own tokens, is refused naming the field") {
    try {
        TrainingSetup six_ways = qwen3_moe(4, 1, 6, 1);
        six_ways.model.moe->n_experts = 96;  // so that ep 6 divides the experts and only the fold is wrong
        (void)build_training_scenario(six_ways, test::source_dir(), "test");
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(e.field() == "ep");
        CHECK(std::string(e.what()).find("tensor axis (4 ranks) that it does not divide") != std::string::npos);
    }
    TrainingSetup no_sp = qwen3_moe(2, 1, 32, 1);
    no_sp.plan.sequence_parallel = false;
    CHECK(test::training_error_field(no_sp) == "sequence_parallel");
}

TEST_CASE("run records fold expert parallelism and keep interleaving over uneven stages") {
    const auto records = load_run_records(test::data_file("runs/published-runs-dev.json"), test::source_dir());
    const auto find = [&](const std::string& id) {
        const auto it = std::find_if(records.begin(), records.end(), [&](const RunRecord& r) { return r.id == id; });
        REQUIRE(it != records.end());
        return *it;
    };
    // 94 layers at pp 8, vpp 4: uneven stages, still interleaved.
    const TrainingSetup cross = record_training_setup(find("moezoo-qwen3-235b-h100-crossnode-ep"), test::source_dir());
    CHECK(cross.plan.vpp == 4);
    CHECK(cross.plan.stage_layers == balanced_stage_layers(94, 8));
    CHECK(cross.plan.fold_experts);
    // etp unstated: 1 where ep 8 spans the tensor ranks (the ModelZoo's --expert-tensor-parallel-size 1),
    // whether it then takes all of 2 context ranks or half of 4 ...
    CHECK(record_training_setup(find("moezoo-qwen3-235b-h100-longctx-32k"), test::source_dir()).plan.etp == 1);
    const TrainingSetup half = record_training_setup(find("moezoo-qwen3-235b-h100-longctx-64k"), test::source_dir());
    CHECK(half.plan.etp == 1);
    // ... where the context axis splits: 2 of its ranks inside the expert group, next to the tensor ranks.
    const TrainingScenario split = build_training_scenario(half, test::source_dir(), "test");
    CHECK(split.plan.size("ep_context") == 2);
    CHECK(split.plan.size(PlanAxis::context) == 4);
    const LayoutWork work = derive_layout_work(split);
    const DerivedCollective& a2a = dispatch(work.moe);
    CHECK(axes_size(a2a.axes, split.plan.axes) == 8);
    // 4 tensor x 2 context ranks: one 8-GPU node, so the all-to-all stays on NVLink.
    CHECK(group_footprint(split.mesh, a2a.axes, "test").size() == 1);
    // Grok-1's NeMo recipe states etp = tp: kept.
    CHECK(record_training_setup(find("dgxc-grok1-314b-BF16-8gpu"), test::source_dir()).plan.etp == 4);
}

TEST_CASE("zero-bubble and DualPipe bubbles follow DeepSeek-V3's Table 2: (pp-1)(F+B-2W) and (pp/2-1)(F&B+B-3W)") {
    LayoutCosts l;
    l.matmul_fwd_s = 1.0;  // F = 1 per micro-batch on the stage
    l.matmul_bwd_s = 2.0;  // B = 2, of which W (the weight gradients) = 1
    l.pipeline_size = 8;
    l.local_params = 1e9;
    l.saved_bytes_per_layer[0] = 1e6;  // the layer input
    StepKnobs k;
    k.microbatches = 16;
    const auto bubble = [&](PipelineSchedule schedule) {
        k.schedule = schedule;
        StepParts parts{};
        (void)estimate_step_time(l, k, parts);
        return parts[static_cast<std::size_t>(StepPart::bubble)];
    };
    CHECK(bubble(PipelineSchedule::one_f_one_b) == doctest::Approx(7.0 * 3.0));
    CHECK(bubble(PipelineSchedule::zero_bubble) == doctest::Approx(7.0 * (3.0 - 2.0 * 1.0)));
    CHECK(bubble(PipelineSchedule::dualpipe) == doctest::Approx((8.0 / 2 - 1) * (3.0 + 2.0 - 3.0 * 1.0)));
    // Memory: DualPipe keeps two stages' parameters and one micro-batch more in flight.
    k.schedule = PipelineSchedule::one_f_one_b;
    const MemoryBreakdown one = estimate_memory(l, k);
    k.schedule = PipelineSchedule::dualpipe;
    const MemoryBreakdown dual = estimate_memory(l, k);
    CHECK(dual.parameters_bytes == 2 * one.parameters_bytes);
    CHECK(dual.activations_bytes / one.activations_bytes == doctest::Approx(9.0 / 8.0));
    k.schedule = PipelineSchedule::zero_bubble;
    CHECK(estimate_memory(l, k).total_bytes() == one.total_bytes());
}

TEST_CASE("an uneven pipeline is paced by its slowest stage: the last with the output layer, or the largest other") {
    LayoutCosts l;
    l.matmul_fwd_s = 1.0;  // 3 per layer and micro-batch, forward and backward
    l.matmul_bwd_s = 2.0;
    l.pipeline_size = 4;
    l.local_params = 1e9;
    l.saved_bytes_per_layer[0] = 1e6;
    StepKnobs k;
    k.microbatches = 8;
    const auto parts_with = [&](double last_layers, double other_layers, double logits_s) {
        l.last_stage_layers = last_layers;
        l.other_stage_layers = other_layers;
        l.logits_s = logits_s;
        StepParts parts{};
        (void)estimate_step_time(l, k, parts);
        return std::pair{parts[static_cast<std::size_t>(StepPart::matmuls)], parts[static_cast<std::size_t>(StepPart::bubble)]};
    };
    // Three-layer stages (9 a micro-batch) and a last stage of two (6) with an output layer of 2: the
    // three-layer stages set the pace, and the output layer is off the critical path.
    CHECK(parts_with(2, 3, 2.0).first == doctest::Approx(8 * 3 * 3.0));
    CHECK(parts_with(2, 3, 2.0).second == doctest::Approx(3 * 9.0));
    // An output layer of 4: the last stage (6 + 4) is the slowest.
    CHECK(parts_with(2, 3, 4.0).first == doctest::Approx(8 * (2 * 3.0 + 4.0)));
    CHECK(parts_with(2, 3, 4.0).second == doctest::Approx(3 * 10.0));
    // An even split: the last stage, with the output layer, as before.
    CHECK(parts_with(3, 3, 2.0).first == doctest::Approx(8 * (3 * 3.0 + 2.0)));
    CHECK(parts_with(3, 3, 2.0).second == doctest::Approx(3 * 11.0));
}

TEST_CASE("DualPipe needs an even pipeline") {
    TrainingSetup setup = llama405b_pp8(1);
    setup.plan.schedule = PipelineSchedule::dualpipe;
    CHECK(simulate_training(build_training_scenario(setup, test::source_dir(), "test")).step_time_s > 0);
    setup.chips = 56;
    setup.global_batch_seqs = 28;
    setup.plan.pp = 7;
    setup.plan.stage_layers = balanced_stage_layers(126, 7);
    try {
        (void)build_training_scenario(setup, test::source_dir(), "test");
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(e.field() == "schedule");
    }
}
