// One place says whether a plan is valid (spec/plan_check): the search, which prunes before it
// builds, and the plan builder `train` and `validate` use must give every plan the same verdict.
#include <doctest/doctest.h>

#include <random>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "model/recompute_catalog.hpp"
#include "search/train_search.hpp"
#include "sharding/strategy_file.hpp"
#include "spec/plan_check.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

// 12 query heads over 4 KV heads and 6 layers: 8-way tensor parallelism or 8 stages break them.
ModelSpec small_model(bool moe) {
    ModelSpec m;
    m.name = moe ? "small-moe" : "small";
    m.n_layers = 6;
    m.d_model = 1536;
    m.n_heads = 12;
    m.n_kv_heads = 4;
    m.head_dim = 128;
    m.d_ff = 6144;
    m.vocab_size = 32000;
    if (moe) m.moe = MoeSpec{.n_experts = 6, .top_k = 2, .d_ff_expert = 1024};
    return m;
}

struct Job {
    ModelSpec model;
    Hardware hardware;
    std::int64_t chips = 16;
    double seq_len = 1536, global_batch_seqs = 24;
};

// The search with every degree fixed (and the other knobs pinned, to keep it small): does any plan
// pass the plan's rules? Plans refused later for the topology, the strategy or memory did.
bool search_accepts(const Job& job, const Plan& plan) {
    TrainSearchSpec spec;
    spec.model = job.model;
    spec.chip = job.hardware.chip;
    spec.stack = default_stack(job.hardware.chip, false, test::source_dir());
    ClusterShape shape;
    shape.chips = job.chips;
    spec.cluster = build_cluster(job.hardware, shape);
    spec.seq_len = job.seq_len;
    spec.global_batch_seqs = job.global_batch_seqs;
    spec.threads = 1;
    SearchConstraints& f = spec.fixed;
    for (const DegreeField& field : kDegreeFields)
        if (field.value != &Degrees::dp || plan.dp != 0) f.*field.given = plan.*field.value;
    f.fix(&Plan::sequence_parallel, false);
    f.fix(&Plan::offload_optimizer, false);
    f.fix(&Plan::overlap, true);
    f.fix(&Plan::tp_overlap, false);
    f.fix(&Plan::schedule, PipelineSchedule::one_f_one_b);
    f.fix(&Plan::micro_batch_seqs, 1.0);
    f.recompute_policies = {RecomputePolicy{}};
    for (const auto& name : strategies_needed(f)) spec.strategies[name] = resolve_strategy(name, test::source_dir());
    try {
        const TrainSearchResult result = search_training(spec);
        const auto later = [&](Rejection why) { return result.rejected[static_cast<std::size_t>(why)] > 0; };
        return result.plans_valid() > 0 || later(Rejection::strategy_dims) || later(Rejection::placement) || later(Rejection::memory);
    } catch (const InputError&) {
        return false;
    }
}

// The same plan through the builder, as `train` takes it (an uneven pipeline given its split, as
// the search gives one).
bool builder_accepts(const Job& job, const Plan& plan) {
    TrainingSetup setup;
    setup.model = job.model;
    setup.hardware = job.hardware;
    setup.chips = job.chips;
    setup.seq_len = job.seq_len;
    setup.global_batch_seqs = job.global_batch_seqs;
    setup.plan = plan;
    setup.plan.micro_batch_seqs = 1;
    if (plan.pp >= 1 && plan.pp <= job.model.n_layers && job.model.n_layers % plan.pp != 0)
        setup.plan.stage_layers = balanced_stage_layers(job.model.n_layers, plan.pp);
    return test::training_error_field(setup).empty();
}

}  // namespace

TEST_CASE("random plans: the search with every degree fixed and the plan builder agree on which are valid") {
    std::mt19937 random(20261127);
    // Mostly degrees that divide the 16 chips, the heads and the batch, with 3s and 8s among them to break rules.
    const auto pick = [&](std::vector<std::int64_t> from) { return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(random)]; };
    int accepted = 0, refused = 0;
    for (const bool moe : {false, true}) {
        const Job job{small_model(moe), resolve_hardware("dgx-h100", test::source_dir())};
        for (int i = 0; i < 100; ++i) {
            Plan plan;
            plan.dp = i % 5 == 0 ? pick({1, 2, 4, 8}) : 0;  // mostly what the chips leave
            plan.tp = pick({1, 2, 2, 4, 3, 8}), plan.pp = pick({1, 1, 2, 4, 3}), plan.cp = pick({1, 1, 2, 3});
            plan.ep = moe ? pick({1, 1, 2, 3, 4}) : (i % 10 == 1 ? 2 : 1), plan.fsdp = pick({1, 1, 2, 4});
            const std::string degrees_given = job.model.name + ": dp " + std::to_string(plan.dp) + " tp " + std::to_string(plan.tp) +
                                              " pp " + std::to_string(plan.pp) + " cp " + std::to_string(plan.cp) + " ep " +
                                              std::to_string(plan.ep) + " fsdp " + std::to_string(plan.fsdp);
            CAPTURE(degrees_given);
            const bool built = builder_accepts(job, plan);
            CHECK(search_accepts(job, plan) == built);
            ++(built ? accepted : refused);
        }
    }
    // Both verdicts occur often enough for the agreement to mean something.
    CHECK(accepted >= 8);
    CHECK(refused >= 8);
}

TEST_CASE("the model's rules on a plan's degrees, worked by hand") {
    const ModelSpec dense = small_model(false), moe = small_model(true);
    const PlanWorkload workload{1536, 24};
    const auto verdict = [&](const ModelSpec& m, std::int64_t tp, std::int64_t pp, std::int64_t cp, std::int64_t ep, std::int64_t dp) {
        Degrees g;
        g.tp = tp, g.pp = pp, g.cp = cp, g.ep = ep, g.dp = dp;
        return model_rejection(m, g, workload);
    };
    CHECK_FALSE(verdict(dense, 4, 6, 3, 1, 8).has_value());  // 12 heads / 4, 4 KV heads / 4, 6 layers, 1536 / 3, 24 / 8
    CHECK(verdict(dense, 8, 1, 1, 1, 1) == Rejection::tensor_heads);     // 12 heads over 8
    CHECK(verdict(dense, 6, 1, 1, 1, 1) == Rejection::tensor_kv_heads);  // 12 / 6 fine, 4 KV heads over 6 not
    CHECK(verdict(dense, 12, 1, 1, 1, 1).has_value() == false);          // 12 = 3 x 4 KV heads: each replicated
    CHECK(verdict(dense, 1, 1, 1, 2, 2) == Rejection::expert_count);     // no experts
    CHECK(verdict(moe, 1, 1, 1, 4, 4) == Rejection::expert_count);       // 6 experts over 4
    CHECK_FALSE(verdict(moe, 1, 1, 1, 3, 3).has_value());
    CHECK(verdict(dense, 1, 7, 1, 1, 1) == Rejection::pipeline_layers);
    CHECK(verdict(dense, 1, 1, 5, 1, 1) == Rejection::context_seq);      // 1536 / 5
    CHECK(verdict(dense, 1, 1, 1, 1, 16) == Rejection::batch_data);      // 24 / 16
    const PlanFault fault = explain(Rejection::tensor_kv_heads, dense, Degrees{.tp = 6}, workload);
    CHECK(fault.field == "tp");
    CHECK(fault.message.find("4 KV heads") != std::string::npos);
}

// Worked by hand: 16,777,216 tokens (Llama 3's 16M batch) are 2,048 sequences of 8,192; 1,000 tokens
// are no whole sequence of 8,192, and 12,288 are one and a half.
TEST_CASE("a batch in tokens is a whole number of sequences or refused") {
    CHECK(batch_sequences(16'777'216, 8192) == 2048);
    CHECK(batch_sequences(3 * 4096, 4096) == 3);
    CHECK_FALSE(batch_sequences(1000, 8192));
    CHECK_FALSE(batch_sequences(12'288, 8192));
    CHECK_FALSE(batch_sequences(1e300, 1e-300));
}
