// DeepSpeed's ZeRO-3 as it ran in 2021 (stacks/megatron-deepspeed.json): each parameter gathered
// by itself after a device-wide synchronisation, through torch.distributed's list form.
#include <doctest/doctest.h>

#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "model/recompute_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using test::component_s;

namespace {

// Narayanan et al. 2021, Table 2's ZeRO-3 row: GPT-3 175B over 384 A100s, 4 sequences each.
TrainingSetup zero3_gpt3(bool blocks, bool copies, bool overlap = true) {
    TrainingSetup setup;
    setup.model = resolve_model("gpt3-175b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-a100", test::source_dir());
    setup.chips = 384;
    setup.seq_len = 2048;
    setup.global_batch_seqs = 1536;
    setup.plan.dp = 384;
    setup.plan.fsdp = 384;
    setup.plan.micro_batch_seqs = 4;
    setup.plan.recompute = resolve_recompute("full", test::source_dir(), "test", "recompute");
    setup.plan.precision = Dtype::fp16;
    setup.plan.overlap = overlap;
    setup.stack = resolve_stack("megatron-deepspeed", test::source_dir());
    setup.stack->sharded_comm_blocks = blocks;
    setup.stack->sharded_copies_per_rank = copies;
    return setup;
}

double gathers_s(const TrainingSetup& setup) {
    return component_s(simulate_training(build_training_scenario(setup, test::source_dir(), "test")), "weight gathers (exposed)");
}

}  // namespace

TEST_CASE("the 2021 ZeRO-3 ships both behaviours, with their source") {
    const Stack stack = resolve_stack("megatron-deepspeed", test::source_dir());
    CHECK(stack.sharded_comm_blocks);
    CHECK(stack.sharded_copies_per_rank);
    // Today's DeepSpeed gathers coalesced and prefetches under compute.
    const Stack today = resolve_stack("deepspeed", test::source_dir());
    CHECK_FALSE(today.sharded_comm_blocks);
    CHECK_FALSE(today.sharded_copies_per_rank);
}

TEST_CASE("gathers that synchronise the device first hide under nothing: as exposed as with overlap off") {
    const double prefetched_s = gathers_s(zero3_gpt3(false, false));
    const double blocking_s = gathers_s(zero3_gpt3(true, false));
    const double overlap_off_s = gathers_s(zero3_gpt3(false, false, false));
    CHECK(blocking_s == doctest::Approx(overlap_off_s).epsilon(1e-9));
    // Prefetched under a layer of 175B's compute, most of them hide.
    CHECK(prefetched_s < 0.5 * blocking_s);
}

TEST_CASE("the list form copies one piece per rank in and out of a flat buffer, each a kernel at the chip's floor") {
    const TrainingSetup setup = zero3_gpt3(true, true);
    const double launch_s = setup.hardware.chip.kernels->gemm_launch_s;
    // Worked by hand: a GPT-3 layer has four weight matrices (QKV, attention output, MLP in, MLP
    // out; its biases and norms ZeRO-3 keeps whole), each gathered forward, gathered again
    // backward and its gradient reduce-scattered: 12 list-form collectives over the 384 ranks.
    // 96 layers, one micro-batch of 4 sequences per step.
    const double copies_s = 96.0 * 12.0 * 384.0 * launch_s;
    CHECK(copies_s == doctest::Approx(3.51).epsilon(0.01));
    CHECK(gathers_s(setup) - gathers_s(zero3_gpt3(true, false)) == doctest::Approx(copies_s).epsilon(1e-6));
    // Their count grows with the ranks: twice the ranks, twice the copies per collective.
    TrainingSetup wider = setup, wider_plain = zero3_gpt3(true, false);
    for (TrainingSetup* s : {&wider, &wider_plain}) {
        s->chips = s->plan.dp = s->plan.fsdp = 768;
        s->plan.micro_batch_seqs = 2;
    }
    CHECK(gathers_s(wider) - gathers_s(wider_plain) == doctest::Approx(2.0 * copies_s).epsilon(1e-6));
}
