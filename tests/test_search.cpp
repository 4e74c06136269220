// The parallelism search: against a brute force that builds and simulates every plan through the
// `train` path one by one, for its best plan and its count of valid plans; its fronts; the same
// answer for any thread count; the refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "model/recompute_catalog.hpp"
#include "app/search_train.hpp"
#include "search/search_front.hpp"
#include "search/train_search.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

ModelSpec mid_model() {
    ModelSpec m;
    m.name = "mid";
    m.n_layers = 6;
    m.d_model = 4096;
    m.n_heads = 32;
    m.n_kv_heads = 8;
    m.head_dim = 128;
    m.d_ff = 16384;
    m.vocab_size = 32000;
    return m;
}

TrainSearchSpec spec_on(const std::string& hardware_name, std::int64_t chips, const ModelSpec& model) {
    const Hardware hardware = resolve_hardware(hardware_name, test::source_dir());
    TrainSearchSpec spec;
    spec.model = model;
    spec.chip = hardware.chip;
    spec.stack = default_stack(hardware.chip, false, test::source_dir());
    ClusterShape shape;
    shape.chips = chips;
    spec.cluster = build_cluster(hardware, shape);
    spec.seq_len = 1024;
    spec.global_batch_seqs = 16;
    spec.top_k = 5;
    spec.fixed.recompute_policies = recompute_policies(test::source_dir(), true);
    for (const auto& name : strategies_needed(spec.fixed)) spec.strategies[name] = resolve_strategy(name, test::source_dir());
    return spec;
}

std::vector<std::int64_t> divisors(std::int64_t n) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = 1; i <= n; ++i)
        if (n % i == 0) out.push_back(i);
    return out;
}

struct BruteForce {
    std::uint64_t plans = 0, valid = 0;
    double best_step_s = 1e300;
};

// Every plan of the documented space with offload off, data-parallel overlap on and tensor
// overlap off, each built and simulated on its own through the `train` path.
BruteForce brute_force(const TrainSearchSpec& spec, const Hardware& hardware) {
    BruteForce out;
    const ModelSpec& m = spec.model;
    const std::int64_t chips = spec.cluster.chips();
    const auto batch = static_cast<std::int64_t>(spec.global_batch_seqs);
    for (const auto tp : divisors(chips))
        for (const auto pp : divisors(chips / tp))
            for (const auto cp : divisors(chips / tp / pp)) {
                const std::int64_t dp = chips / tp / pp / cp;
                for (const auto fsdp : divisors(dp)) {
                    const bool layout_ok = m.n_heads % tp == 0 && (m.n_kv_heads % tp == 0 || tp % m.n_kv_heads == 0) && pp <= m.n_layers &&
                                           static_cast<std::int64_t>(spec.seq_len) % cp == 0 && batch % dp == 0;
                    const std::vector<std::int64_t> mbs = batch % dp == 0 ? divisors(batch / dp) : std::vector<std::int64_t>{1};
                    std::vector<int> zeros = fsdp > 1 ? std::vector<int>{3} : dp == 1 ? std::vector<int>{0} : std::vector<int>{0, 1, 2};
                    std::vector<std::pair<PipelineSchedule, std::int64_t>> schedules;
                    if (pp == 1) schedules = {{PipelineSchedule::one_f_one_b, 1}};
                    else {
                        schedules = {{PipelineSchedule::gpipe, 1}, {PipelineSchedule::one_f_one_b, 1}};
                        // Interleaving over uneven stages too: chunks dividing the largest stage, none empty.
                        for (const auto v : divisors((m.n_layers + pp - 1) / pp))
                            if (v > 1 && v <= m.n_layers / pp) schedules.push_back({PipelineSchedule::interleaved, v});
                    }
                    std::vector<std::string> axes;
                    const std::vector<std::pair<std::string, std::int64_t>> sizes = {
                        {"data", dp / fsdp}, {"fsdp", fsdp}, {"tensor", tp}, {"context", cp}, {"pipeline", pp}};
                    for (const auto& [name, size] : sizes)
                        if (size > 1) axes.push_back(name);
                    std::vector<std::vector<std::string>> placements;
                    do placements.push_back(axes);
                    while (std::next_permutation(axes.begin(), axes.end(), [](const std::string& a, const std::string& b) {
                        const std::vector<std::string> order = {"data", "fsdp", "expert", "tensor", "context", "pipeline"};
                        return std::find(order.begin(), order.end(), a) < std::find(order.begin(), order.end(), b);
                    }));
                    for (const bool sp : tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})
                        for (const auto mb : mbs)
                            for (const auto& placement : placements)
                                for (const auto& [schedule, vpp] : schedules)
                                    for (const RecomputePolicy& rc : spec.fixed.recompute_policies)
                                        for (const int zero : zeros) {
                                            ++out.plans;
                                            if (!layout_ok) continue;
                                            const double microbatches = static_cast<double>(batch / dp / mb);
                                            if (schedule == PipelineSchedule::interleaved && static_cast<std::int64_t>(microbatches) % pp != 0)
                                                continue;
                                            TrainingSetup setup;
                                            setup.model = m;
                                            setup.hardware = hardware;
                                            setup.cluster = spec.cluster;
                                            setup.chips = chips;
                                            setup.seq_len = spec.seq_len;
                                            setup.global_batch_seqs = spec.global_batch_seqs;
                                            Plan& p = setup.plan;
                                            p.dp = dp, p.tp = tp, p.pp = pp, p.cp = cp, p.fsdp = fsdp, p.vpp = vpp;
                                            p.sequence_parallel = sp, p.zero = zero, p.recompute = rc, p.schedule = schedule;
                                            p.micro_batch_seqs = static_cast<double>(mb);
                                            p.placement = placement;
                                            if (m.n_layers % pp != 0)
                                                for (std::int64_t s = 0; s < pp; ++s)
                                                    p.stage_layers.push_back(m.n_layers / pp + (s < m.n_layers % pp ? 1 : 0));
                                            try {
                                                const TrainingReport r = simulate_training(build_training_scenario(setup, test::source_dir(), "plan"));
                                                if (!r.fits) continue;
                                                ++out.valid;
                                                out.best_step_s = std::min(out.best_step_s, r.step_time_s);
                                            } catch (const InputError&) {
                                            }
                                        }
                }
            }
    return out;
}

// A searched plan run through the `train` path on the search's job.
TrainingReport simulate_searched(const TrainSearchSpec& spec, const Hardware& hardware, const SearchedPlan& plan) {
    TrainingSetup setup;
    setup.model = spec.model;
    setup.hardware = hardware;
    setup.cluster = spec.cluster;
    setup.chips = spec.cluster.chips();
    setup.seq_len = spec.seq_len;
    setup.global_batch_seqs = spec.global_batch_seqs;
    setup.plan = plan;
    setup.stack = spec.stack;
    return simulate_training(build_training_scenario(setup, test::source_dir(), "plan"));
}

}  // namespace

TEST_CASE("search finds the best plan and counts the valid ones as a plan-by-plan brute force does") {
    const Hardware hardware = resolve_hardware("tpu-v5e", test::source_dir());
    TrainSearchSpec spec = spec_on("tpu-v5e", 8, mid_model());
    spec.fixed.fix(&Plan::offload_optimizer, false);
    spec.fixed.fix(&Plan::overlap, true);
    spec.fixed.fix(&Plan::tp_overlap, false);
    const TrainSearchResult result = search_training(spec);
    const BruteForce brute = brute_force(spec, hardware);

    CHECK(result.plans_evaluated == brute.plans);
    CHECK(result.plans_valid() == brute.valid);
    CHECK(brute.valid > 0);
    CHECK(result.rejected[static_cast<std::size_t>(Rejection::memory)] > 0);  // the space straddles the 16 GB of a v5e
    REQUIRE(!result.top.empty());
    CHECK(test::relative_error(result.top.front().step_time_s, brute.best_step_s) < 1e-12);
    std::uint64_t rejected = 0;
    for (const auto count : result.rejected) rejected += count;
    CHECK(result.plans_costed + rejected == result.plans_evaluated);
}

TEST_CASE("fsdp weights kept after the forward pass (FSDP2 reshard_after_forward off): every top plan keeps them, as train prices it") {
    const Hardware hardware = resolve_hardware("dgx-h100", test::source_dir());
    TrainSearchSpec spec = spec_on("dgx-h100", 16, mid_model());
    spec.global_batch_seqs = 64;
    spec.fixed.fsdp = 16;
    const TrainSearchResult resharded = search_training(spec);
    spec.fixed.fix(&Plan::reshard_after_forward, std::optional<bool>(false));
    const TrainSearchResult kept = search_training(spec);
    REQUIRE(!kept.top.empty());
    REQUIRE(!resharded.top.empty());
    for (const SearchedPlan& plan : kept.top) {
        CHECK(plan.reshard_after_forward == std::optional<bool>(false));
        const TrainingReport r = simulate_searched(spec, hardware, plan);
        CHECK(test::relative_error(r.step_time_s, plan.step_time_s) < 1e-12);
        CHECK(test::relative_error(r.memory.total_bytes(), plan.memory_bytes) < 1e-12);
    }
    // Kept, the gathered weights are not gathered again for the backward pass: the best plan is no slower.
    CHECK(kept.top.front().step_time_s <= resharded.top.front().step_time_s);
}

TEST_CASE("every top plan simulates through the train path to the step time and memory the search gave it") {
    const Hardware hardware = resolve_hardware("dgx-h100", test::source_dir());
    TrainSearchSpec spec = spec_on("dgx-h100", 16, mid_model());
    spec.global_batch_seqs = 64;
    spec.top_k = 20;
    // Ranks that vary: the wait for the slowest is a share of each plan's step, not of the last one costed.
    spec.stack.fitted.rank_time_cv = 0.01;
    const TrainSearchResult result = search_training(spec);
    REQUIRE(result.top.size() == 20);
    for (const SearchedPlan& plan : result.top) {
        const TrainingReport r = simulate_searched(spec, hardware, plan);  // the searched plan is the plan train takes
        CHECK(test::relative_error(r.step_time_s, plan.step_time_s) < 1e-12);
        CHECK(test::relative_error(r.memory.total_bytes(), plan.memory_bytes) < 1e-12);
        CHECK(r.fits);
    }
    for (std::size_t i = 1; i < result.top.size(); ++i) CHECK(result.top[i - 1].step_time_s <= result.top[i].step_time_s);
}

TEST_CASE("an MoE search with DeepEP, overlap, imbalance and MTP given: each top plan is what train makes of it") {
    ModelSpec moe = mid_model();
    moe.moe = MoeSpec{16, 2, 4096, 0, 0};
    const Hardware hardware = resolve_hardware("dgx-h100", test::source_dir());
    TrainSearchSpec spec = spec_on("dgx-h100", 16, moe);
    spec.global_batch_seqs = 64;
    spec.top_k = 10;
    spec.fixed.ep = 8;
    spec.fixed.fix(&Plan::moe_dispatcher, std::string("deepep"));
    spec.fixed.fix(&Plan::ep_overlap, true);
    spec.fixed.fix(&Plan::expert_imbalance, 1.3);
    spec.fixed.fix(&Plan::mtp_depth, std::int64_t{1});
    const TrainSearchResult result = search_training(spec);
    REQUIRE(!result.top.empty());
    for (const SearchedPlan& plan : result.top) {
        CHECK(plan.moe_dispatcher == "deepep");
        CHECK(plan.ep_overlap);
        CHECK(plan.expert_imbalance == 1.3);
        CHECK(plan.mtp_depth == 1);
        const TrainingReport r = simulate_searched(spec, hardware, plan);
        CHECK(test::relative_error(r.step_time_s, plan.step_time_s) < 1e-12);
        CHECK(test::relative_error(r.memory.total_bytes(), plan.memory_bytes) < 1e-12);
    }
}

TEST_CASE("uneven pipelines interleave too: 14 layers on 4 stages (3, 4, 4, 3: the outer ones lighter) in 2 chunks each") {
    ModelSpec m = mid_model();
    m.n_layers = 14;
    const Hardware hardware = resolve_hardware("dgx-h100", test::source_dir());
    TrainSearchSpec spec = spec_on("dgx-h100", 16, m);
    spec.global_batch_seqs = 64;
    spec.fixed.pp = 4;
    spec.fixed.fix(&Plan::schedule, PipelineSchedule::interleaved);
    const TrainSearchResult result = search_training(spec);
    REQUIRE(!result.top.empty());
    for (const SearchedPlan& plan : result.top) {
        CHECK(plan.vpp == 2);  // 4 would leave the 3-layer stages a chunk short
        CHECK(plan.stage_layers == std::vector<std::int64_t>{3, 4, 4, 3});
        const TrainingReport r = simulate_searched(spec, hardware, plan);
        CHECK(test::relative_error(r.step_time_s, plan.step_time_s) < 1e-12);
    }
}

TEST_CASE("the top K lists a plan once: other axis orders costing the same within 0.1% are counted, the best kept") {
    const auto plan = [](std::int64_t tp, std::uint8_t inner, double step_s, std::uint64_t ordinal) {
        SearchedPlan p;
        p.tp = tp;
        p.placement = inner == 0 ? std::vector<std::string>{"data", "fsdp"} : std::vector<std::string>{"fsdp", "data"};
        p.step_time_s = step_s;
        p.memory_bytes = 1e9;
        p.ordinal = ordinal;
        return p;
    };
    TopPlans top(3);
    for (const SearchedPlan& p : {plan(8, 0, 1.0, 1), plan(8, 1, 1.0005, 2), plan(4, 0, 1.0002, 3), plan(8, 1, 0.9999, 4),
                                  plan(2, 0, 1.001, 5), plan(2, 1, 1.02, 6)})
        if (top.admits(p.step_time_s, p.memory_bytes, p.ordinal)) top.insert(p);
    REQUIRE(top.plans().size() == 3);
    CHECK(top.plans()[0].ordinal == 4);  // the fastest order of tp8, standing for three
    CHECK(top.plans()[0].other_orders == 2);
    CHECK(top.plans()[1].ordinal == 3);
    CHECK(top.plans()[1].other_orders == 0);
    CHECK(top.plans()[2].ordinal == 5);  // tp2's other order is 2% slower: a plan of its own, below the cut
    CHECK(top.plans()[2].other_orders == 0);
}

TEST_CASE("a real search's top K holds no two orders of one plan that cost the same") {
    TrainSearchSpec spec = spec_on("dgx-h100", 32, mid_model());
    spec.global_batch_seqs = 64;
    spec.top_k = 40;  // deep enough to hold plans whose axis orders tie, whatever the stack's fitted overheads
    const TrainSearchResult result = search_training(spec);
    std::uint32_t merged = 0;
    for (std::size_t i = 0; i < result.top.size(); ++i) {
        merged += result.top[i].other_orders;
        for (std::size_t j = i + 1; j < result.top.size(); ++j) {
            const SearchedPlan& a = result.top[i];
            const SearchedPlan& b = result.top[j];
            const bool same_knobs = a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.fsdp == b.fsdp &&
                                    a.sequence_parallel == b.sequence_parallel && a.zero == b.zero &&
                                    a.micro_batch_seqs == b.micro_batch_seqs && a.recompute == b.recompute &&
                                    a.schedule == b.schedule && a.vpp == b.vpp && a.overlap == b.overlap &&
                                    a.tp_overlap == b.tp_overlap && a.offload_optimizer == b.offload_optimizer;
            CHECK_FALSE((same_knobs && std::abs(a.step_time_s - b.step_time_s) <= 1e-3 * a.step_time_s));
        }
    }
    CHECK(merged > 0);
}

TEST_CASE("a plan rejected by an input error keeps its reason: the field and what is wrong") {
    TrainSearchSpec spec = spec_on("dgx-h100", 24, mid_model());  // 24 chips: three 8-GPU nodes
    spec.global_batch_seqs = 48;
    const TrainSearchResult result = search_training(spec);
    const auto placement = static_cast<std::size_t>(Rejection::placement);
    REQUIRE(result.rejected[placement] > 0);
    const std::string& reason = result.examples[placement].reason;
    CAPTURE(reason);
    CHECK(reason.find("mesh.") == 0);  // the axis that did not fit
    CHECK(reason.find("cannot be laid on the topology") != std::string::npos);
}

TEST_CASE("a sweep of chip counts: the front holds the counts no other beats on time and cost, the objective picks") {
    app::SearchTrainRequest request;
    request.spec = spec_on("dgx-h100", 8, mid_model());
    request.hardware = resolve_hardware("dgx-h100", test::source_dir());
    request.chip_counts = {8, 16, 32};
    request.global_batch_seqs = 64;
    request.train_tokens = 1e9;
    request.data_dir = test::source_dir();
    for (const auto objective : {app::ScalingObjective::time, app::ScalingObjective::cost}) {
        request.objective = objective;
        const report::ScalingOutcome out = app::search_train_scaling(request);
        REQUIRE(out.points.size() == 3);
        const report::ScalingPoint* chosen = nullptr;
        for (const auto& p : out.points) {
            REQUIRE(p.best);
            // Time to train from the best plan's step: tokens / (tokens per step) x step time.
            CHECK(p.time_to_train_s == doctest::Approx(1e9 / (64.0 * 1024) * p.best->report.step_time_s));
            bool dominated = false;
            for (const auto& q : out.points)
                dominated = dominated || (q.time_to_train_s <= p.time_to_train_s && *q.cost_usd <= *p.cost_usd &&
                                          (q.time_to_train_s < p.time_to_train_s || *q.cost_usd < *p.cost_usd));
            CHECK(p.on_front == !dominated);
            const auto score = [&](const report::ScalingPoint& x) {
                return objective == app::ScalingObjective::time ? x.time_to_train_s : *x.cost_usd;
            };
            if (chosen == nullptr || score(p) < score(*chosen)) chosen = &p;
        }
        CHECK(out.chosen_chips == chosen->chips);
    }
}

TEST_CASE("the Pareto front trades memory for time and ends at the fastest plan") {
    TrainSearchSpec spec = spec_on("tpu-v5e", 16, mid_model());
    spec.global_batch_seqs = 32;
    const TrainSearchResult result = search_training(spec);
    REQUIRE(result.pareto.size() >= 2);
    for (std::size_t i = 1; i < result.pareto.size(); ++i) {
        CHECK(result.pareto[i - 1].memory_bytes <= result.pareto[i].memory_bytes);
        CHECK(result.pareto[i - 1].step_time_s > result.pareto[i].step_time_s);
    }
    CHECK(result.pareto.back().step_time_s == result.top.front().step_time_s);
    for (const SearchedPlan& p : result.pareto) CHECK(p.memory_bytes <= spec.chip.hbm_bytes);
}

TEST_CASE("the search gives the same answer on any number of threads") {
    TrainSearchSpec spec = spec_on("dgx-h100", 32, mid_model());
    spec.global_batch_seqs = 64;
    spec.threads = 1;
    const TrainSearchResult one = search_training(spec);
    spec.threads = 3;
    const TrainSearchResult three = search_training(spec);
    CHECK(one.plans_evaluated == three.plans_evaluated);
    CHECK(one.rejected == three.rejected);
    REQUIRE(one.top.size() == three.top.size());
    for (std::size_t i = 0; i < one.top.size(); ++i) CHECK(one.top[i].ordinal == three.top[i].ordinal);
    for (std::size_t i = 0; i < kRejections; ++i) CHECK(one.examples[i].reason == three.examples[i].reason);
    REQUIRE(one.pareto.size() == three.pareto.size());
    for (std::size_t i = 0; i < one.pareto.size(); ++i) CHECK(one.pareto[i].ordinal == three.pareto[i].ordinal);
}

TEST_CASE("fixed knobs restrict the space, contradicting ones are refused") {
    TrainSearchSpec spec = spec_on("dgx-h100", 16, mid_model());
    spec.global_batch_seqs = 64;
    spec.fixed.tp = 2;
    const RecomputePolicy selective = resolve_recompute("selective", test::source_dir(), kRequest, "recompute");
    spec.fixed.recompute_policies = {selective};
    const TrainSearchResult result = search_training(spec);
    REQUIRE(!result.top.empty());
    for (const SearchedPlan& p : result.top) {
        CHECK(p.tp == 2);
        CHECK(p.recompute == selective);
    }
    spec.fixed.tp.reset();
    spec.fixed.recompute_policies = recompute_policies(test::source_dir(), true);
    spec.fixed.fix(&Plan::vpp, std::int64_t{3});  // interleaving: only pipelines whose layers split into 3 chunks per stage
    const TrainSearchResult interleaved = search_training(spec);
    CHECK(!interleaved.top.empty());
    for (const SearchedPlan& p : interleaved.top) {
        CHECK(p.vpp == 3);
        CHECK(p.schedule == PipelineSchedule::interleaved);
    }
    spec.fixed.given.reset(knob_index(&Plan::vpp));
    spec.fixed.tp = 3;  // does not divide 16 chips
    CHECK_THROWS_AS((void)search_training(spec), InputError);
    const ModelSpec model = spec.model;
    spec.model.n_heads = 24;  // 24 query heads split 4 ways, 6 KV heads neither split 4 ways nor fit 4 copies
    spec.model.n_kv_heads = 6;
    spec.fixed.tp = 4;
    CHECK_THROWS_AS((void)search_training(spec), InputError);
    spec.model = model;
    spec.fixed.tp.reset();
    spec.fixed.dp = 16;  // 16 replicas for 8 sequences
    spec.global_batch_seqs = 8;
    CHECK_THROWS_AS((void)search_training(spec), InputError);
}

TEST_CASE("search CLI: rejection table, JSON face, a range of chip counts, and bad input") {
    const auto ok = test::run_ridgeline(
        "search train --model llama3-8b --hardware dgx-h100 --chips 16 --global-batch-seqs 64 --seq-len 4096 --top 3 --json");
    REQUIRE(ok.exit_code == 0);
    const auto doc = nlohmann::json::parse(ok.out);
    CHECK(doc["schema"] == "ridgeline.search-train/1");
    CHECK(doc["top"].size() == 3);
    CHECK(doc["plans_valid"].get<std::uint64_t>() > 0);
    std::uint64_t rejected = 0;
    for (const auto& [reason, count] : doc["rejected"].items()) rejected += count.get<std::uint64_t>();
    CHECK(doc["plans_evaluated"].get<std::uint64_t>() == doc["plans_valid"].get<std::uint64_t>() + rejected);
    CHECK(doc["top"][0]["report"]["schema"] == "ridgeline.train/1");
    CHECK(doc["top"][0]["report"]["step_time_s"].get<double>() <= doc["top"][1]["report"]["step_time_s"].get<double>());
    CHECK(doc["pareto"].size() >= 1);

    // Nothing fits: an answer with its reasons, not an error.
    const auto none = test::run_ridgeline("search train --model llama3-405b --hardware dgx-h100 --chips 8 --global-batch-seqs 8");
    CHECK(none.exit_code == 0);
    CHECK(none.out.find("did not fit in 80.00 GB") != std::string::npos);
    CHECK(none.out.find("No plan fits") != std::string::npos);

    // A custom graph: collectives it cannot run over part of a dimension are rejections, not errors.
    const std::string hypercube = (test::source_dir() / "hardware" / "topologies" / "hypercube-16.json").string();
    const auto custom = test::run_ridgeline("search train --model llama3-8b --topology " + hypercube + " --chips 16 --global-batch-seqs 64 --json");
    REQUIRE(custom.exit_code == 0);
    CHECK(nlohmann::json::parse(custom.out)["rejected"]["placement"].get<std::uint64_t>() > 0);

    const auto range = test::run_ridgeline("search train --model llama3-8b --hardware dgx-h100 --chips 8..32 --global-batch-seqs 64 --json");
    REQUIRE(range.exit_code == 0);
    const auto scaling = nlohmann::json::parse(range.out);
    CHECK(scaling["schema"] == "ridgeline.search-scaling/1");
    REQUIRE(scaling["points"].size() == 3);
    CHECK(scaling["points"][2]["chips"] == 32);

    const std::vector<std::pair<std::string, std::string>> bad = {
        {"--chips 0 --global-batch-seqs 16", "--chips"},
        {"--chips 64..8 --global-batch-seqs 16", "--chips"},
        {"--chips 16 --global-batch-seqs 16 --tp 3", "--tp"},
        {"--chips 16 --global-batch-seqs 8 --dp 16", "--dp"},
        {"--chips 16 --global-batch-seqs 16 --placement tensor,tensor", "--placement"},
        {"--chips 16 --global-batch-seqs 16 --sp maybe", "--sp"},
        {"--chips 16 --global-batch-seqs 16 --vpp 5", "fixed knobs"}};
    for (const auto& [flags, named] : bad) {
        const auto r = test::run_ridgeline("search train --model llama3-8b --hardware dgx-h100 " + flags);
        INFO(flags);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find(named) != std::string::npos);
    }
}

TEST_CASE("no plan a search keeps beats the compute roofline of its step (MFU never above 1)") {
    for (const char* model_name : {"llama3-8b", "mixtral-8x7b"}) {
        TrainSearchSpec spec = spec_on("dgx-h100", 32, resolve_model(model_name, test::source_dir()));
        spec.seq_len = 4096;
        spec.global_batch_seqs = 256;
        spec.top_k = 300;
        const TrainSearchResult result = search_training(spec);
        const double step_flops = flops_per_token(spec.model, spec.seq_len, true).training() * spec.seq_len * spec.global_batch_seqs;
        const double roofline_s = step_flops / (32.0 * spec.chip.peak_flops(Dtype::bf16));
        INFO(model_name);
        REQUIRE(!result.top.empty());
        for (const SearchedPlan& p : result.top) CHECK(p.step_time_s >= roofline_s);
        for (const SearchedPlan& p : result.pareto) CHECK(p.step_time_s >= roofline_s);
    }
}
