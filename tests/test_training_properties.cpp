// Properties the training model must obey for any model, chip and plan (seeded, reproducible):
// it never beats the compute or weight-streaming rooflines, faster memory never slows it down,
// FSDP over more chips never raises per-chip parameter memory, and every reported number is finite.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "model/recompute_catalog.hpp"
#include "report/reports.hpp"
#include "scenario/training_setup.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

struct Generator {
    std::mt19937_64 rng{20261122};
    std::int64_t pick(std::initializer_list<std::int64_t> values) {
        std::vector<std::int64_t> v(values);
        return v[static_cast<std::size_t>(rng() % v.size())];
    }
    bool coin() { return rng() % 2 == 0; }

    ModelSpec model() {
        ModelSpec m;
        m.name = "random";
        m.n_heads = pick({8, 16, 32, 64});
        m.n_kv_heads = m.n_heads / pick({1, 2, 4, 8});
        m.head_dim = pick({64, 128});
        m.d_model = m.n_heads * m.head_dim * pick({1, 2}) / 2 * 2;
        m.d_ff = m.d_model * pick({2, 3, 4});
        m.n_layers = pick({4, 8, 16, 32});
        m.vocab_size = pick({32000, 128256});
        m.mlp = coin() ? MlpKind::gated : MlpKind::plain;
        if (rng() % 4 == 0) m.moe = MoeSpec{pick({8, 16}), pick({1, 2}), m.d_ff / 2, 0, 0};
        return m;
    }
};

void check_finite(const nlohmann::json& value, const std::string& path) {
    if (value.is_number()) {
        CAPTURE(path);
        CHECK(std::isfinite(value.get<double>()));
    } else if (value.is_object()) {
        for (const auto& item : value.items()) check_finite(item.value(), path + "." + item.key());
    } else if (value.is_array()) {
        for (const auto& item : value) check_finite(item, path + "[]");
    }
}

}  // namespace

TEST_CASE("property: the training model obeys its rooflines and monotonicities") {
    Generator g;
    const std::vector<std::pair<std::string, std::int64_t>> hardware = {
        {"dgx-h100", 8}, {"dgx-a100", 8}, {"tpu-v5p", 4}, {"dgx-b200", 8}, {"tpu-v5e", 8}};
    const std::vector<RecomputePolicy> policies = recompute_policies(test::source_dir(), false);
    int evaluated = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const auto& [system, unit] = hardware[static_cast<std::size_t>(trial) % hardware.size()];
        TrainingSetup setup;
        setup.model = g.model();
        setup.hardware = resolve_hardware(system, test::source_dir());
        setup.chips = unit * g.pick({1, 2, 4, 8});
        setup.seq_len = static_cast<double>(g.pick({512, 2048, 8192}));
        Plan& p = setup.plan;
        p.tp = std::min<std::int64_t>(g.pick({1, 2, 4, 8}), setup.model.n_kv_heads);
        if (setup.chips % p.tp != 0) p.tp = 1;
        p.pp = g.pick({1, 2});
        if ((setup.chips / p.tp) % p.pp != 0) p.pp = 1;
        const std::int64_t dp = setup.chips / (p.tp * p.pp);
        p.fsdp = g.coin() ? dp : 1;
        p.zero = static_cast<int>(g.pick({0, 1, 2}));
        p.sequence_parallel = p.tp > 1 && g.coin();
        p.recompute = policies[static_cast<std::size_t>(g.pick({0, 1, 2, 3, 4, 5})) % policies.size()];
        p.micro_batch_seqs = static_cast<double>(g.pick({1, 2}));
        setup.global_batch_seqs = static_cast<double>(dp) * p.micro_batch_seqs * static_cast<double>(g.pick({1, 2, 4}));
        CAPTURE(trial);
        TrainingScenario scenario;
        try {
            scenario = build_training_scenario(setup, test::source_dir(), "trial");
        } catch (const InputError&) {
            continue;  // a plan the generator made that does not divide the model: refused, as it should be
        }
        const TrainingReport report = simulate_training(scenario);
        ++evaluated;
        const double chips = static_cast<double>(setup.chips);
        const double peak = scenario.chip.peak_flops(scenario.plan.precision);
        // Never faster than the FLOPs at peak, nor than streaming this chip's weights once.
        CHECK(report.mfu <= 1.0);
        CHECK(report.hfu <= 1.0 + 1e-12);
        CHECK(report.step_time_s >= report.model_flops_per_token * report.tokens_per_step / (chips * peak) * (1 - 1e-12));
        CHECK(report.step_time_s >= report.memory.parameters_bytes / scenario.chip.hbm_bw_Bps);
        double sum = 0;
        for (const auto& c : report.components) {
            CHECK(c.time_s >= 0);
            sum += c.time_s;
        }
        CHECK(sum == doctest::Approx(report.step_time_s));
        check_finite(nlohmann::json::parse(report::training_json(scenario, report, 1e12)), "train");

        // Faster memory never slows the step.
        TrainingScenario faster = scenario;
        faster.chip.hbm_bw_Bps *= 2;
        CHECK(simulate_training(faster).step_time_s <= report.step_time_s * (1 + 1e-12));
        // FSDP over twice the chips never raises the parameters each chip holds.
        if (p.fsdp > 1) {
            TrainingSetup doubled = setup;
            doubled.chips *= 2;
            doubled.plan.fsdp *= 2;
            doubled.global_batch_seqs *= 2;
            try {
                const TrainingReport wider = simulate_training(build_training_scenario(doubled, test::source_dir(), "trial"));
                CHECK(wider.memory.parameters_bytes <= report.memory.parameters_bytes * (1 + 1e-12));
            } catch (const InputError&) {
                // the wider slice could not be shaped; nothing to compare
            }
        }
    }
    CHECK(evaluated >= 150);
}

// The search skips the overlap settings of knobs whose floor cannot rank: the floor must lie under
// the step of every overlap setting, and equal it where nothing but the overlap-free parts costs.
TEST_CASE("property: the step-time floor lies under every overlap setting's step, and is the step without communication") {
    std::mt19937 random(7);
    std::uniform_real_distribution<double> time_s(1e-6, 1e-2);
    for (int trial = 0; trial < 200; ++trial) {
        LayoutCosts l;
        for (double* t : {&l.matmul_fwd_s, &l.attention_fwd_s, &l.elementwise_fwd_s, &l.launches_fwd_s, &l.matmul_bwd_s, &l.attention_bwd_s,
                          &l.elementwise_bwd_s, &l.launches_bwd_s, &l.logits_s, &l.norm_fwd_s, &l.activation_fwd_s, &l.mlp_up_fwd_s,
                          &l.step_overhead_s})
            *t = time_s(random);
        // Even stages, or a last stage lighter or heavier than the largest other.
        l.last_stage_layers = 1 + trial % 7;
        l.other_stage_layers = l.last_stage_layers + (trial % 5) - 2;
        l.layers_per_stage = std::max(l.last_stage_layers, l.other_stage_layers);
        l.local_params = 1e9;
        l.optimizer_shard_size = 8;
        l.hbm_Bps = 3e12;
        l.host_link_Bps = 5e10;
        StepKnobs k;
        k.microbatches = 1 + trial % 16;
        k.recompute = static_cast<RecomputeModules>(trial % 3 == 0 ? RecomputeModule::layer : RecomputeModule::norms);
        k.zero_stage = trial % 4;
        k.offload_optimizer = trial % 5 == 0;
        StepParts parts{};
        // Without communication, bubble or stragglers the step is the floor, to the bit.
        CHECK(estimate_step_time(l, k, parts) == step_time_floor_s(l, k));
        for (double* t : {&l.tensor_comm_fwd_s, &l.tensor_comm_bwd_s, &l.tp_overlap_sm_s, &l.context_comm_fwd_s, &l.context_comm_bwd_s,
                          &l.expert_comm_s, &l.weight_comm_fwd_s, &l.weight_comm_bwd_s, &l.gradient_comm_s, &l.gather_comm_s, &l.pipeline_send_s})
            *t = time_s(random);
        l.pipeline_size = 1 + trial % 4;
        l.straggler_fraction = 0.01 * (trial % 3);
        const double floor_s = step_time_floor_s(l, k);
        for (const bool overlap : {false, true})
            for (const bool tp_overlap : {false, true})
                for (const bool ep_overlap : {false, true}) {
                    k.overlap_data_parallel = overlap, k.overlap_tensor_parallel = tp_overlap, k.overlap_expert_parallel = ep_overlap;
                    CHECK(floor_s <= estimate_step_time(l, k, parts));
                }
    }
}
