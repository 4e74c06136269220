// The expert all-to-all as MoE stacks run it: DeepEP's node-deduplicated dispatch, node-limited
// routing (DeepSeek-V3), and the all-to-all hidden under another micro-batch's compute.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "collective/collective.hpp"
#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using test::component_s;

namespace {

// Qwen3-235B-A22B as the Megatron MoE ModelZoo ran it across nodes: tp 2, ep 32 (tensor 2 x data
// 16, four DGX H100 nodes), pp 8 with 4 virtual stages, micro-batch 1 (ModelZoo qwen3 readme).
TrainingSetup qwen3_crossnode(const std::string& dispatcher, bool overlap) {
    TrainingSetup setup;
    setup.model = resolve_model("qwen3-235b-a22b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-h100", test::source_dir());
    setup.chips = 256;
    setup.seq_len = 4096;
    setup.global_batch_seqs = 2048;
    setup.plan.tp = 2;
    setup.plan.pp = 8;
    setup.plan.vpp = 4;
    setup.plan.ep = 32;
    setup.plan.etp = 1;
    setup.plan.sequence_parallel = true;
    setup.plan.fold_experts = true;
    setup.plan.micro_batch_seqs = 1;
    setup.plan.stage_layers = balanced_stage_layers(94, 8);
    setup.plan.moe_dispatcher = dispatcher;
    setup.plan.ep_overlap = overlap;
    return setup;
}

TrainingReport simulate(const TrainingSetup& setup) { return simulate_training(build_training_scenario(setup, test::source_dir(), "test")); }

}  // namespace

TEST_CASE("a routed token reaches 1 - C(E - E/n, k) / C(E, k) of n members, node-limited routing caps them") {
    // Qwen3: top-8 of 128 experts over 4 nodes of 32 experts each.
    const double none_on_a_node = (96.0 * 95 * 94 * 93 * 92 * 91 * 90 * 89) / (128.0 * 127 * 126 * 125 * 124 * 123 * 122 * 121);
    const RoutedTokens qwen3{8, 128, 0, 0, true};
    CHECK(routed_members_reached(qwen3, 4) == doctest::Approx(4.0 * (1.0 - none_on_a_node)));
    CHECK(routed_members_reached(qwen3, 1) == doctest::Approx(1.0));
    // Never more members than the token has experts: 8 of 128 over 64 nodes reach at most 8.
    CHECK(routed_members_reached(qwen3, 64) <= 8.0);
    CHECK(routed_members_reached(qwen3, 64) > 7.0);
    // DeepSeek-V3: 256 experts in 8 groups, a token uses 4 of them; on 8 nodes it reaches at most 4
    // (unlimited it would reach 8 x (1 - C(224, 8) / C(256, 8)) = 5.3).
    const RoutedTokens deepseek{8, 256, 8, 4, true};
    CHECK(routed_members_reached(deepseek, 8) == doctest::Approx(4.0));
    const RoutedTokens unlimited{8, 256, 0, 0, true};
    const double none_of_8 = (224.0 * 223 * 222 * 221 * 220 * 219 * 218 * 217) / (256.0 * 255 * 254 * 253 * 252 * 251 * 250 * 249);
    CHECK(routed_members_reached(unlimited, 8) == doctest::Approx(8.0 * (1.0 - none_of_8)));
    // On 16 nodes each group spans two: 4 groups reach at most 8 nodes.
    CHECK(routed_members_reached(deepseek, 16) <= 8.0);
}

constexpr const char* kStragglers = "waiting for the slowest rank";

TEST_CASE("DeepEP sends each token over InfiniBand once per node: the cross-node all-to-all shrinks by nodes reached / k") {
    const TrainingReport nccl = simulate(qwen3_crossnode("alltoall", false));
    const TrainingReport deepep = simulate(qwen3_crossnode("deepep", false));
    const double a2a_nccl = component_s(nccl, "expert all-to-all (exposed)");
    const double a2a_deepep = component_s(deepep, "expert all-to-all (exposed)");
    // 32 expert ranks on 4 nodes: a token's 8 experts lie on 4 x (1 - P0) nodes on average.
    const double none_on_a_node = (96.0 * 95 * 94 * 93 * 92 * 91 * 90 * 89) / (128.0 * 127 * 126 * 125 * 124 * 123 * 122 * 121);
    const double expected_ratio = 4.0 * (1.0 - none_on_a_node) / 8.0;
    CHECK(a2a_deepep / a2a_nccl == doctest::Approx(expected_ratio).scale(0).epsilon(0.02));  // latency terms are the rest
    // Everything else in the step is the same.
    CHECK(component_s(deepep, "matmuls (incl. output layer)") == doctest::Approx(component_s(nccl, "matmuls (incl. output layer)")));
    const double bubble_change = component_s(nccl, "pipeline bubble") - component_s(deepep, "pipeline bubble");
    // The wait for the slowest rank is a share of the step: it shrinks with the step.
    const double wait_change = component_s(nccl, kStragglers) - component_s(deepep, kStragglers);
    CHECK(wait_change == doctest::Approx((nccl.step_time_s - deepep.step_time_s) * component_s(nccl, kStragglers) / nccl.step_time_s));
    CHECK(nccl.step_time_s - deepep.step_time_s == doctest::Approx(a2a_nccl - a2a_deepep + bubble_change + wait_change));
}

TEST_CASE("with expert-parallel overlap the all-to-all hides under another micro-batch's compute, DualPipe's by construction") {
    const TrainingReport plain = simulate(qwen3_crossnode("deepep", false));
    const TrainingReport hidden = simulate(qwen3_crossnode("deepep", true));
    // Per layer the deduplicated all-to-all (about 5 ms) is shorter than a layer's forward and backward compute.
    CHECK(plain.per_layer.exposed_comm_s < plain.per_layer.forward_s + plain.per_layer.backward_s);
    // Hidden, its kernels still hold 20 of the H100's 132 SMs (DeepSeek-V3 report, Sec. 3.2.2): the
    // compute under it runs 20/132 of the all-to-all's time longer.
    const double sm_share = 20.0 / 132.0;
    const double plain_a2a = component_s(plain, "expert all-to-all (exposed)");
    CHECK(component_s(hidden, "expert all-to-all (exposed)") == doctest::Approx(sm_share * plain_a2a));
    CHECK(hidden.step_time_s < plain.step_time_s);
    // The bubble shrinks with the micro-batch it is made of; the rest of the step loses the all-to-all less its SMs' share.
    const double bubble_change = component_s(plain, "pipeline bubble") - component_s(hidden, "pipeline bubble");
    const double wait_change = component_s(plain, kStragglers) - component_s(hidden, kStragglers);
    CHECK(plain.step_time_s - hidden.step_time_s == doctest::Approx((1.0 - sm_share) * plain_a2a + bubble_change + wait_change));
    // DualPipe overlaps a forward chunk's all-to-all with a backward chunk's compute without being asked.
    TrainingSetup dualpipe = qwen3_crossnode("deepep", false);
    dualpipe.plan.vpp = 1;
    dualpipe.plan.schedule = PipelineSchedule::dualpipe;
    const double dualpipe_a2a = component_s(simulate(dualpipe), "expert all-to-all (exposed)");
    dualpipe.plan.schedule = PipelineSchedule::one_f_one_b;
    CHECK(dualpipe_a2a == doctest::Approx(sm_share * component_s(simulate(dualpipe), "expert all-to-all (exposed)")));
}

TEST_CASE("a dispatcher or overlap the stack lacks, an unknown dispatcher: refused naming the field") {
    TrainingSetup setup = qwen3_crossnode("deepep", false);
    setup.stack = resolve_stack("pytorch-eager", test::source_dir());
    CHECK(test::training_error_field(setup) == "moe_dispatcher");
    setup = qwen3_crossnode("alltoall", true);
    setup.stack = resolve_stack("pytorch-eager", test::source_dir());
    CHECK(test::training_error_field(setup) == "ep_overlap");
    CHECK(test::training_error_field(qwen3_crossnode("nvshmem", false)) == "moe_dispatcher");
}

TEST_CASE("DeepSeek-V3's group-limited routing: the shipped file and the HF config (n_group 8, topk_group 4) agree") {
    const ModelSpec shipped = resolve_model("deepseek-v3", test::source_dir());
    REQUIRE(shipped.moe);
    CHECK(shipped.moe->routing_groups == 8);
    CHECK(shipped.moe->routing_groups_per_token == 4);
    const ModelSpec hf = resolve_model(test::data_file("hf/deepseek_v3-config.json").string(), test::source_dir());
    REQUIRE(hf.moe);
    CHECK(hf.moe->routing_groups == 8);
    CHECK(hf.moe->routing_groups_per_token == 4);
}

TEST_CASE("a node limit of 0, more groups per token than groups, or a top-k above the expert count: exit 2 naming the field") {
    const auto dir = test::scratch_dir("moe_dispatch");
    const auto write = [&](const std::string& name, const std::string& moe) {
        const auto path = dir / name;
        std::ofstream(path) << R"({"schema": "ridgeline.model-spec/1", "name": "tiny-moe", "description": "a test model", "source": "made up for this test", "n_layers": 2, "d_model": 256, "n_heads": 4,
 "d_ff": 512, "vocab_size": 1000, "mlp": "gated", "norm": "rmsnorm", "moe": )" << moe << "}";
        return path.string();
    };
    const auto zero = test::run_ridgeline("model " + write("zero.json", R"({"n_experts": 16, "top_k": 2, "d_ff_expert": 128, "routing_groups": 4, "routing_groups_per_token": 0})"));
    CHECK(zero.exit_code == 2);
    CHECK(zero.err.find("routing_groups_per_token") != std::string::npos);
    const auto many = test::run_ridgeline("model " + write("many.json", R"({"n_experts": 16, "top_k": 2, "d_ff_expert": 128, "routing_groups": 4, "routing_groups_per_token": 5})"));
    CHECK(many.exit_code == 2);
    CHECK(many.err.find("routing_groups_per_token") != std::string::npos);
    const auto top_k = test::run_ridgeline("model " + write("top-k.json", R"({"n_experts": 16, "top_k": 17, "d_ff_expert": 128})"));
    CHECK(top_k.exit_code == 2);
    CHECK(top_k.err.find("top-k.json") != std::string::npos);
    CHECK(top_k.err.find("top_k") != std::string::npos);
    CHECK(top_k.out.empty());
    const auto dispatcher = test::run_ridgeline(
        "train --model qwen3-235b-a22b --hardware dgx-h100 --chips 256 --seq-len 4096 --global-batch-seqs 2048 --tp 2 --pp 2 "
        "--ep 8 --sp --moe-dispatcher deepep --stack pytorch-eager");
    CHECK(dispatcher.exit_code == 2);
    CHECK(dispatcher.err.find("moe_dispatcher") != std::string::npos);
}

TEST_CASE("the Megatron MoE ModelZoo's cross-node Qwen3 runs: DeepEP's deduplication brings them within 25%") {
    const auto run = test::run_ridgeline("validate " + test::data_file("runs/published-runs-dev.json").string() +
                                         " --source megatron_moe_modelzoo --json");
    REQUIRE(run.exit_code == 0);
    const nlohmann::json doc = nlohmann::json::parse(run.out);
    int checked = 0;
    for (const auto& r : doc["records"]) {
        const std::string id = r["id"];
        if (id.find("crossnode-ep") == std::string::npos) continue;
        INFO(id);
        REQUIRE(r["status"] == "ok");
        // Measured 19.7 s and 17.6 s per step (ModelZoo qwen3 readme); without deduplication the first was 40% slow.
        CHECK(std::abs(r["error"].get<double>()) < 0.25);
        ++checked;
    }
    CHECK(checked == 2);
}

TEST_CASE("load imbalance: the busiest expert rank receives, computes and returns imbalance x its share") {
    TrainingSetup balanced = qwen3_crossnode("deepep", false);
    TrainingSetup skewed = balanced;
    skewed.plan.expert_imbalance = 1.2;
    const TrainingScenario a = build_training_scenario(balanced, test::source_dir(), "test");
    const TrainingScenario b = build_training_scenario(skewed, test::source_dir(), "test");
    const LayoutWork work_a = derive_layout_work(a), work_b = derive_layout_work(b);
    const auto flops = [](const LayerWork& w, const std::string& name) {
        for (const DerivedMatmul& m : w.matmuls)
            if (m.name == name) return m.flops();
        FAIL("no matmul " << name);
        return 0.0;
    };
    CHECK(flops(work_b.moe, "experts_in") == doctest::Approx(1.2 * flops(work_a.moe, "experts_in")));
    CHECK(flops(work_b.moe, "experts_out") == doctest::Approx(1.2 * flops(work_a.moe, "experts_out")));
    CHECK(flops(work_b.moe, "qkv") == doctest::Approx(flops(work_a.moe, "qkv")));  // attention is not routed
    const double a2a_a = component_s(simulate_training(a), "expert all-to-all (exposed)");
    const double a2a_b = component_s(simulate_training(b), "expert all-to-all (exposed)");
    CHECK(a2a_b / a2a_a == doctest::Approx(1.2).scale(0).epsilon(0.02));
    // The model's FLOPs (and so MFU's numerator) do not change: the other ranks idle.
    CHECK(simulate_training(b).model_flops_per_token == doctest::Approx(simulate_training(a).model_flops_per_token));
}

TEST_CASE("an imbalance below 1, or above ep (more than every token on one rank): refused naming the field") {
    for (const double imbalance : {0.9, 33.0}) {
        TrainingSetup setup = qwen3_crossnode("alltoall", false);
        setup.plan.expert_imbalance = imbalance;
        CHECK(test::training_error_field(setup) == "expert_imbalance");
    }
    const auto low = test::run_ridgeline("train --model qwen3-235b-a22b --hardware dgx-h100 --chips 256 --tp 2 --pp 2 --ep 8 --expert-imbalance 0.9");
    CHECK(low.exit_code == 2);
    CHECK(low.err.find("--expert-imbalance") != std::string::npos);
}

TEST_CASE("a stack whose overlapped all-to-all holds a negative or impossible number of SMs is refused naming the field") {
    for (const double sms : {-1.0, 5000.0}) {
        nlohmann::json stack = test::read_json(test::source_dir() / "stacks" / "megatron-core.json");
        stack["expert_comm_sms"] = sms;
        const auto path = test::scratch_dir("stacks") / "bad-sms.json";
        std::ofstream(path) << stack.dump(2);
        try {
            (void)load_stack_file(path);
            FAIL("no error for " << sms);
        } catch (const InputError& e) {
            CHECK(e.field() == "expert_comm_sms");
            CHECK(std::string(e.what()).find("bad-sms.json") != std::string::npos);
        }
    }
}

TEST_CASE("the router: a d_model x experts GEMM on each local token, then fp32 softmax and top-k over its scores") {
    const LayoutWork work = derive_layout_work(build_training_scenario(qwen3_crossnode("deepep", false), test::source_dir(), "test"));
    // One 4,096-token sequence split over tp 2 by sequence parallelism: 2,048 local tokens, 128 experts.
    const double tokens = 4096.0 / 2, experts = 128;
    const auto router = std::find_if(work.moe.matmuls.begin(), work.moe.matmuls.end(), [](const DerivedMatmul& m) { return m.name == "router"; });
    REQUIRE(router != work.moe.matmuls.end());
    CHECK(router->rows == tokens);
    CHECK(router->contract == 4096);
    CHECK(router->cols == experts);
    const auto softmax = std::find_if(work.moe.elementwise.begin(), work.moe.elementwise.end(),
                                      [](const ElementwiseOp& op) { return op.name == "router softmax and top-k"; });
    REQUIRE(softmax != work.moe.elementwise.end());
    // Read fp32 logits, write fp32 probabilities, read them for top-k: 12 bytes per score, 6 bf16 elements.
    CHECK(softmax->elements == doctest::Approx(tokens * experts * 12.0 / 2.0));
    // Dense layers route nothing.
    CHECK(std::none_of(work.dense.elementwise.begin(), work.dense.elementwise.end(),
                       [](const ElementwiseOp& op) { return op.name == "router softmax and top-k"; }));
}

TEST_CASE("fp8 dispatch: routed tokens cross in 1 byte and a scale per 128, the combine and the gradients in bf16") {
    TrainingSetup setup = qwen3_crossnode("deepep", false);
    setup.plan.precision = Dtype::fp8;
    const auto bytes_of = [](const LayoutWork& work, const std::string& what) {
        for (const DerivedCollective& c : work.moe.collectives)
            if (c.what == what) return c.bytes;
        FAIL("no collective " << what);
        return 0.0;
    };
    const LayoutWork bf16 = derive_layout_work(build_training_scenario(setup, test::source_dir(), "test"));
    setup.plan.fp8_dispatch = true;
    const LayoutWork fp8 = derive_layout_work(build_training_scenario(setup, test::source_dir(), "test"));
    // DeepSeek-V3's 1 x 128 tiles: (1 + 4/128) bytes against bf16's 2.
    CHECK(bytes_of(fp8, "experts: all-to-all dispatch") == doctest::Approx(bytes_of(bf16, "experts: all-to-all dispatch") * (1.0 + 4.0 / 128) / 2));
    CHECK(bytes_of(fp8, "experts: all-to-all combine") == doctest::Approx(bytes_of(bf16, "experts: all-to-all combine")));
    CHECK(bytes_of(fp8, "experts: all-to-all of gradients") == doctest::Approx(bytes_of(bf16, "experts: all-to-all of gradients")));
    const TrainingReport slower = simulate(setup);
    setup.plan.fp8_dispatch = false;
    CHECK(component_s(slower, "expert all-to-all (exposed)") < component_s(simulate(setup), "expert all-to-all (exposed)"));

    // Without fp8 GEMMs, DeepEP or experts to dispatch to: refused naming the field.
    TrainingSetup bf16_gemms = qwen3_crossnode("deepep", false);
    bf16_gemms.plan.fp8_dispatch = true;
    CHECK(test::training_error_field(bf16_gemms) == "fp8_dispatch");
    TrainingSetup nccl = qwen3_crossnode("alltoall", false);
    nccl.plan.precision = Dtype::fp8;
    nccl.plan.fp8_dispatch = true;
    CHECK(test::training_error_field(nccl) == "fp8_dispatch");
    const auto cli = test::run_ridgeline("train --model llama3-8b --hardware dgx-h100 --chips 8 --precision fp8 --fp8-dispatch");
    CHECK(cli.exit_code == 2);
    CHECK(cli.err.find("fp8_dispatch") != std::string::npos);
}

TEST_CASE("experts split over the tensor ranks reduce in the token dispatcher, which tensor-parallel overlap does not hide") {
    TrainingSetup setup = qwen3_crossnode("alltoall", false);
    setup.plan.etp = 0;  // experts split over tp 2, as Megatron-Core's default
    setup.plan.ep = 16;
    const LayoutWork work = derive_layout_work(build_training_scenario(setup, test::source_dir(), "test"));
    int reductions = 0;
    for (const DerivedCollective& c : work.moe.collectives)
        if (c.what.starts_with("experts: all-reduce")) {
            CHECK(c.role == CommRole::experts);
            ++reductions;
        }
    CHECK(reductions == 2);
    const double plain = component_s(simulate(setup), "expert all-to-all (exposed)");
    setup.plan.tp_overlap = true;
    const TrainingReport overlapped = simulate(setup);
    CHECK(component_s(overlapped, "expert all-to-all (exposed)") == doctest::Approx(plain));
    CHECK(plain > 0);
}
