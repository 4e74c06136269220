// What crosses a pipeline stage boundary: Megatron-LM's scatter/gather of activations every tensor
// rank holds whole, one crossing per virtual stage when interleaved, and the stacks that hide them.
#include <doctest/doctest.h>

#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using test::component_s;

namespace {

// GPT-3 175B as Narayanan et al. ran it: tp 8 in a DGX A100, 8 stages across nodes, no sequence
// parallelism, 16 micro-batches of one sequence.
TrainingSetup gpt3_pipeline(const std::string& stack, std::int64_t vpp) {
    TrainingSetup setup;
    setup.model = resolve_model("gpt3-175b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-a100", test::source_dir());
    setup.chips = 64;
    setup.seq_len = 2048;
    setup.global_batch_seqs = 16;
    setup.plan.tp = 8;
    setup.plan.pp = 8;
    setup.plan.vpp = vpp;
    setup.plan.micro_batch_seqs = 1;
    setup.plan.precision = Dtype::fp16;
    setup.stack = resolve_stack(stack, test::source_dir());
    return setup;
}

double sends_s(const TrainingSetup& setup) {
    return component_s(simulate_training(build_training_scenario(setup, test::source_dir(), "test")), "pipeline sends");
}

}  // namespace

TEST_CASE("Megatron-LM sends a 1/tp slice of whole activations to the next stage and all-gathers it over NVLink") {
    TrainingSetup whole = gpt3_pipeline("megatron-lm-2021", 1);
    whole.stack->pipeline_scatter_gather = false;
    const double whole_s = sends_s(whole), sliced_s = sends_s(gpt3_pipeline("megatron-lm-2021", 1));
    // A DGX A100 GPU has 25 GB/s of InfiniBand and 300 GB/s of NVLink: an eighth of the bytes
    // over InfiniBand, plus 7/8 of them over NVLink (about 0.6 of that eighth's time).
    CHECK(sliced_s > whole_s / 8.0);
    CHECK(sliced_s < whole_s / 4.0);
    // With sequence parallelism the activations are split over the tensor ranks already: nothing changes.
    TrainingSetup sp = gpt3_pipeline("megatron-lm-2021", 1), sp_whole = sp;
    sp.plan.sequence_parallel = sp_whole.plan.sequence_parallel = true;
    sp_whole.stack->pipeline_scatter_gather = false;
    CHECK(sends_s(sp) == doctest::Approx(sends_s(sp_whole)));
}

TEST_CASE("interleaved, a micro-batch crosses each stage boundary once per virtual stage, hidden where the stack overlaps the sends") {
    // 96 layers on 8 stages: 12 per rank, in 3 virtual stages of 4.
    const double plain_s = sends_s(gpt3_pipeline("megatron-lm-2021", 1));
    CHECK(sends_s(gpt3_pipeline("megatron-lm-2021", 3)) == doctest::Approx(3.0 * plain_s));
    // Megatron-Core overlaps them with the next virtual stage's compute (4 layers, far longer than a send).
    CHECK(sends_s(gpt3_pipeline("megatron-core", 1)) > 0.0);
    CHECK(sends_s(gpt3_pipeline("megatron-core", 3)) == 0.0);
}
