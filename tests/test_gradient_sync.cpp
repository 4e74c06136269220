// The data-parallel traffic of a step: how much of it the backward (or forward) pass hides, one
// chunk at a time when the pipeline is interleaved, and in what precision gradients are reduced.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/step_model.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"
#include "validation/run_record.hpp"
#include "validation/validate.hpp"

using namespace ridgeline;
using test::component_s;

namespace {

// A stage of 4 layers on a 4-stage pipeline: one micro-batch's backward through it takes
// b = 4 x 2 ms = 8 ms; its gradients take T = 4 x `per_layer_s` to reduce.
double exposed_gradient_sync_s(double per_layer_s, PipelineSchedule schedule, double chunks, bool overlap) {
    LayoutCosts l;
    l.matmul_fwd_s = 0.001;
    l.matmul_bwd_s = 0.002;
    l.layers_per_stage = l.last_stage_layers = l.other_stage_layers = 4;
    l.pipeline_size = 4;
    l.local_params = 1e9;
    l.gradient_comm_s = per_layer_s;
    StepKnobs k;
    k.microbatches = 16;
    k.schedule = schedule;
    k.virtual_stages = chunks;
    k.overlap_data_parallel = overlap;
    StepParts parts{};
    (void)estimate_step_time(l, k, parts);
    return parts[static_cast<std::size_t>(StepPart::gradient_sync)];
}

// GPT-3 175B as a 2024 Megatron-Core run: tp 8 and 6 stages of H100s, 4 replicas whose gradient
// sync crosses InfiniBand, nothing overlapped so that the whole sync shows.
TrainingSetup gpt3_replicas(const std::string& stack) {
    TrainingSetup setup;
    setup.model = resolve_model("gpt3-175b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-h100", test::source_dir());
    setup.chips = 192;
    setup.seq_len = 2048;
    setup.global_batch_seqs = 48;
    setup.plan.tp = 8;
    setup.plan.pp = 6;
    setup.plan.micro_batch_seqs = 1;
    setup.plan.sequence_parallel = true;
    setup.plan.zero = 1;  // the distributed optimizer: gradients reduce-scattered, weights all-gathered
    setup.plan.overlap = false;
    setup.stack = resolve_stack(stack, test::source_dir());
    return setup;
}

double sync_s(const TrainingSetup& setup) {
    return component_s(simulate_training(build_training_scenario(setup, test::source_dir(), "test")), "gradient sync (exposed)");
}

}  // namespace

TEST_CASE("gradients are reduced under the last backward pass, each model chunk as soon as its own last backward ends") {
    // One chunk: T - b. T = 20 ms -> 12 ms exposed.
    CHECK(exposed_gradient_sync_s(0.005, PipelineSchedule::one_f_one_b, 1, true) == doctest::Approx(0.012));
    // Interleaved over 4 chunks, chunk c's last backward ends c x p = 4c chunk-steps (of b/4 = 2 ms)
    // before the pass does: 8 ms apart. Each chunk's 5 ms of traffic is done before the next is
    // ready, but for the first layers' chunk, whose 5 ms start under its own 2 ms backward: 3 ms.
    CHECK(exposed_gradient_sync_s(0.005, PipelineSchedule::interleaved, 4, true) == doctest::Approx(0.003));
    // T = 80 ms: 20 ms per chunk outruns the 8 ms gaps, so the traffic queues from the last
    // chunk's readiness, 3 x 8 + 2 = 26 ms before the end: 80 - 26 = 54 ms exposed.
    CHECK(exposed_gradient_sync_s(0.020, PipelineSchedule::interleaved, 4, true) == doctest::Approx(0.054));
    // Not overlapped, it is all exposed, interleaved or not.
    CHECK(exposed_gradient_sync_s(0.005, PipelineSchedule::interleaved, 4, false) == doctest::Approx(0.020));
    // Hidden entirely when the traffic is shorter than the pass.
    CHECK(exposed_gradient_sync_s(0.001, PipelineSchedule::one_f_one_b, 1, true) == doctest::Approx(0.0));
}

TEST_CASE("Megatron-Core r0.8.0 reduces bf16 gradients in fp32: twice the bytes, fp16 runs excepted") {
    const TrainingSetup fp32 = gpt3_replicas("megatron-core-0.8");
    REQUIRE(fp32.stack->fp32_gradient_reduction);
    TrainingSetup bf16 = fp32;
    bf16.stack->fp32_gradient_reduction = false;
    // The reduce-scatter of gradients and the all-gather of weights move as many elements each
    // (175B / 48 ranks, 3.6 GB in bf16, across 4 replicas: the bandwidth terms dominate). In fp32
    // the first doubles: (4 + 2) / (2 + 2) = 1.5 times the bf16 sync.
    CHECK(sync_s(fp32) / sync_s(bf16) == doctest::Approx(1.5).scale(0).epsilon(0.02));
    TrainingSetup fp16 = fp32, fp16_plain = bf16;
    fp16.plan.precision = fp16_plain.plan.precision = Dtype::fp16;
    CHECK(sync_s(fp16) == doctest::Approx(sync_s(fp16_plain)).scale(0).epsilon(1e-12));
}

TEST_CASE("a run record's gradient reduce dtype wins over its stack's, as LLM Foundry's MP Mode column gives it") {
    // LLM Foundry's tables name Composer's FSDP mixed precision per row: DEFAULT reduces gradients in
    // fp32, PURE in bf16. Each record carries it, and the model prices what the row ran.
    const auto dev_set = test::data_file("runs/published-runs-dev.json");
    const nlohmann::json records = test::read_json(dev_set).at("records");
    int foundry = 0;
    for (const auto& r : records) {
        if (r.at("software").at("framework") != "llm-foundry") continue;
        ++foundry;
        const bool stated_default = r.at("notes").get<std::string>().find("mixed_precision=DEFAULT") != std::string::npos;
        CAPTURE(r.at("id"));
        CHECK(r.at("plan").at("gradient_reduce_dtype") == (stated_default ? "fp32" : "bf16"));
    }
    CHECK(foundry == 149);
    // 30B on 8 A100s under FSDP (a DEFAULT row): in bf16 its gradients move half the bytes, so the
    // step cannot be slower, and the scenario says which dtype it reduced in.
    RunRecord fp32;
    for (const RunRecord& r : load_run_records(dev_set, test::source_dir()))
        if (r.id == "mosaic-30b-a100_80gb-8gpu-s512-amp_bf16-mbs12") fp32 = r;
    REQUIRE(fp32.gradient_reduce_dtype == std::optional<std::string>("fp32"));
    RunRecord bf16 = fp32;
    bf16.gradient_reduce_dtype = "bf16";
    const TrainingScenario wide = record_scenario(fp32, test::source_dir()), narrow = record_scenario(bf16, test::source_dir());
    CHECK(wide.stack.fp32_gradient_reduction);
    CHECK_FALSE(narrow.stack.fp32_gradient_reduction);
    CHECK(simulate_training(wide).step_time_s > simulate_training(narrow).step_time_s);
    // A dtype it does not know is refused, naming the field.
    nlohmann::json doc = test::read_json(dev_set);
    nlohmann::json record = records.at(0);
    record["plan"]["gradient_reduce_dtype"] = "fp64";
    doc["records"] = nlohmann::json::array({record});
    const auto path = test::scratch_dir("gradient_reduce") / "bad.json";
    std::ofstream(path) << doc.dump();
    const auto result = test::run_ridgeline("validate " + path.string());
    CHECK(result.exit_code == 2);
    CHECK(result.err.find("gradient_reduce_dtype") != std::string::npos);
}
