// The training model: collectives derived from partition specs, checked by hand; the step and its
// memory against first-principles bounds; the plan refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/layer_ops.hpp"
#include "engine/roofline.hpp"
#include "engine/training.hpp"
#include "inference/serving.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

ModelSpec small_model() {
    ModelSpec m;
    m.name = "small";
    m.n_layers = 4;
    m.d_model = 1024;
    m.n_heads = 8;
    m.n_kv_heads = 8;
    m.head_dim = 128;
    m.d_ff = 4096;
    m.vocab_size = 32000;
    return m;
}

int count(const LayerWork& work, CollectiveKind kind, CommPhase phase, const std::string& axis) {
    return static_cast<int>(std::count_if(work.collectives.begin(), work.collectives.end(), [&](const DerivedCollective& c) {
        return c.kind == kind && c.phase == phase && c.axes == AxisList{axis};
    }));
}

LayerWork derive(const std::string& strategy, const AxisSizes& sizes, double micro = 2, double seq = 512) {
    const Strategy s = resolve_strategy(strategy, test::source_dir());
    return derive_layer_work(small_model(), s, sizes, {micro, seq, 2, 2, 2}, false);
}

TrainingSetup setup_for(const std::string& model, const std::string& hardware, std::int64_t chips) {
    TrainingSetup setup;
    setup.model = resolve_model(model, test::source_dir());
    setup.hardware = resolve_hardware(hardware, test::source_dir());
    setup.chips = chips;
    setup.seq_len = 4096;
    setup.global_batch_seqs = static_cast<double>(chips);
    return setup;
}

}  // namespace

TEST_CASE("Megatron tensor parallelism: two all-reduces forward and two backward, of micro x seq x d_model") {
    const LayerWork work = derive("megatron-tp", {{"data", 2}, {"tensor", 4}});
    CHECK(count(work, CollectiveKind::all_reduce, CommPhase::forward, "tensor") == 2);
    CHECK(count(work, CollectiveKind::all_reduce, CommPhase::backward, "tensor") == 2);
    CHECK(count(work, CollectiveKind::all_gather, CommPhase::forward, "tensor") == 0);
    for (const auto& c : work.collectives)
        if (c.axes == AxisList{"tensor"}) CHECK(c.bytes == 2.0 * 512 * 1024 * 2);  // one replica's activations
    // Column-parallel QKV: the local GEMM is [micro x seq, d_model] x [d_model, 3 x heads x 128 / 4].
    CHECK(work.matmuls[0].rows == 2 * 512);
    CHECK(work.matmuls[0].contract == 1024);
    CHECK(work.matmuls[0].cols == 3 * 8 * 128 / 4);
}

TEST_CASE("sequence parallelism turns each all-reduce into an all-gather before and a reduce-scatter after") {
    const LayerWork work = derive("megatron-tp-sp", {{"data", 2}, {"tensor", 4}});
    CHECK(count(work, CollectiveKind::all_reduce, CommPhase::forward, "tensor") == 0);
    CHECK(count(work, CollectiveKind::all_gather, CommPhase::forward, "tensor") == 2);
    CHECK(count(work, CollectiveKind::reduce_scatter, CommPhase::forward, "tensor") == 2);
    CHECK(count(work, CollectiveKind::reduce_scatter, CommPhase::backward, "tensor") == 2);
    CHECK(count(work, CollectiveKind::all_gather, CommPhase::backward, "tensor") == 2);
    CHECK(work.local_tokens == 2 * 512 / 4);  // the residual stream is split along the sequence
}

TEST_CASE("FSDP gathers every weight forward and backward and reduce-scatters its gradient") {
    const LayerWork work = derive("fsdp", {{"data", 1}, {"fsdp", 8}});
    CHECK(count(work, CollectiveKind::all_gather, CommPhase::forward, "fsdp") == 4);
    CHECK(count(work, CollectiveKind::all_gather, CommPhase::backward, "fsdp") == 4);
    CHECK(count(work, CollectiveKind::reduce_scatter, CommPhase::backward, "fsdp") == 4);
    double gathered = 0;
    for (const auto& c : work.collectives)
        if (c.kind == CollectiveKind::all_gather && c.phase == CommPhase::forward) gathered += c.bytes;
    // The whole layer's bf16 weights: QKV and O (4 D^2) and the gated MLP (3 D F).
    CHECK(gathered == 2.0 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096));
    CHECK(work.weight_elements == doctest::Approx((4.0 * 1024 * 1024 + 3.0 * 1024 * 4096) / 8));
}

TEST_CASE("data parallelism reduces gradients once per step: all-reduce (ZeRO-0) or reduce-scatter + all-gather") {
    Strategy zero0 = resolve_strategy("dp", test::source_dir());
    zero0.optimizer_shard_axes.clear();
    const LayerWork plain = derive_layer_work(small_model(), zero0, {{"data", 8}}, {2, 512, 2, 2, 2}, false);
    CHECK(count(plain, CollectiveKind::all_reduce, CommPhase::gradient, "data") == 4);
    CHECK(count(plain, CollectiveKind::all_reduce, CommPhase::forward, "data") == 0);
    const LayerWork zero1 = derive("dp", {{"data", 8}});
    CHECK(count(zero1, CollectiveKind::reduce_scatter, CommPhase::gradient, "data") == 4);
    CHECK(count(zero1, CollectiveKind::all_gather, CommPhase::optimizer, "data") == 4);
}

TEST_CASE("rotary embeddings are charged to RoPE models only, not to learned absolute positions") {
    Strategy zero0 = resolve_strategy("dp", test::source_dir());
    const auto rope_elements = [&](const ModelSpec& model) {
        double elements = 0;
        for (const auto& e : derive_layer_work(model, zero0, {{"data", 8}}, {2, 512, 2, 2, 2}, false).elementwise)
            if (e.kind == ElementwiseKind::rope) elements += e.elements;
        return elements;
    };
    ModelSpec model = small_model();
    // The q, k, v projection's output is rotated.
    CHECK(rope_elements(model) > 0);
    model.learned_position_embeddings = 2048;
    CHECK(rope_elements(model) == 0);
}

TEST_CASE("a plain MLP's activation runs as one GELU kernel, a gated MLP's as eager SwiGLU's kernels") {
    // One DGX H100 at tp 8 under eager PyTorch, one 2048-token sequence: the activation's forward reads
    // and writes the up projection's output (2048 x its width / 8, bf16) at the chip's measured kernel
    // of that shape: a copy for GELU (x in, y out), SwiGLU's own kernels for a gated MLP (width 2 d_ff).
    const auto activation_fwd_s = [](const std::string& model) {
        TrainingSetup setup = setup_for(model, "dgx-h100", 8);
        setup.seq_len = 2048;
        setup.global_batch_seqs = 1;
        setup.plan.tp = 8;
        setup.plan.sequence_parallel = true;
        setup.stack = resolve_stack("pytorch-eager", test::source_dir());
        const TrainingScenario scenario = build_training_scenario(setup, test::source_dir(), "test");
        return cost_layout(scenario, derive_layout_work(scenario), nullptr).costs.activation_fwd_s;
    };
    const ChipSpec chip = resolve_hardware("dgx-h100", test::source_dir()).chip;
    CHECK(activation_fwd_s("gpt3-175b") == doctest::Approx(memory_bound_s(chip, "copy", 2.0 * 2048 * 49152 / 8 * 2)));
    CHECK(activation_fwd_s("llama3-8b") == doctest::Approx(memory_bound_s(chip, "swiglu_fwd", 2.0 * 2048 * 2 * 14336 / 8 * 2)));
}

TEST_CASE("an ideal chip: MFU below 1, the step no shorter than its FLOPs at peak") {
    TrainingSetup setup = setup_for("llama3-8b", "h100", 8);
    setup.hardware.chip.efficiency = ChipEfficiency{};  // the bare roofline
    setup.hardware.chip.kernels.reset();                // no kernel model, nor the stack's overheads
    setup.plan.tp = 8;
    setup.plan.sequence_parallel = true;
    const TrainingScenario scenario = build_training_scenario(setup, test::source_dir(), "test");
    const TrainingReport report = simulate_training(scenario);
    CHECK(report.mfu > 0.3);
    CHECK(report.mfu <= 1.0);
    const double flops = report.model_flops_per_token * report.tokens_per_step;
    CHECK(report.step_time_s >= flops / (8 * setup.hardware.chip.peak_flops(Dtype::bf16)));
    double total = 0;
    for (const auto& c : report.components) total += c.time_s;
    CHECK(total == doctest::Approx(report.step_time_s));
}

TEST_CASE("FSDP on one v5p torus axis hides its weight gathers only above ~2550 tokens per chip") {
    // fsdp=16 along one 16-chip axis; the other axes replicate. Per-chip tokens = seq x micro-batch.
    const auto exposed_gathers = [](double tokens_per_chip) {
        TrainingSetup setup = setup_for("llama3-70b", "tpu-v5p", 16 * 16);
        setup.hardware.chip.efficiency = ChipEfficiency{};
        setup.seq_len = tokens_per_chip;
        setup.global_batch_seqs = 256;
        setup.plan.fsdp = 16;
        setup.plan.strategy = "fsdp";
        TrainingScenario scenario = build_training_scenario(setup, test::source_dir(), "test");
        scenario.cluster = build_cluster(setup.hardware, {{16, 4, 4}, 0, 0});
        scenario.mesh = place_mesh(scenario.cluster, {{"fsdp", 16}, {"data", 16}}, {"fsdp", "data"});
        scenario.plan.axes = {{"fsdp", 16}, {"data", 16}};
        for (const auto& c : simulate_training(scenario).components)
            if (c.name.find("weight gathers") != std::string::npos) return c.time_s;
        return -1.0;
    };
    CHECK(exposed_gathers(2 * 2550) == 0.0);
    CHECK(exposed_gathers(640) > 0.0);  // a quarter of the threshold
}

TEST_CASE("memory per chip: 2 + 4 + 12 bytes per parameter, optimizer sharded by ZeRO-1, too big is fits: false") {
    TrainingSetup setup = setup_for("llama3-8b", "h100", 8);
    setup.plan.zero = 0;
    const TrainingReport replicated = simulate_training(build_training_scenario(setup, test::source_dir(), "test"));
    CHECK(replicated.memory.optimizer_bytes == doctest::Approx(6.0 * replicated.memory.parameters_bytes));
    CHECK(replicated.memory.gradients_bytes == doctest::Approx(2.0 * replicated.memory.parameters_bytes));
    setup.plan.zero = 1;
    const TrainingReport sharded = simulate_training(build_training_scenario(setup, test::source_dir(), "test"));
    CHECK(sharded.memory.optimizer_bytes == doctest::Approx(replicated.memory.optimizer_bytes / 8));

    TrainingSetup big = setup_for("llama3-70b", "h100", 8);
    big.plan.zero = 0;
    const TrainingReport report = simulate_training(build_training_scenario(big, test::source_dir(), "test"));
    CHECK_FALSE(report.fits);
    CHECK(report.memory.total_bytes() > report.hbm_bytes);
}

TEST_CASE("fsdp weights kept from the forward pass: one gather fewer, every layer of the stage held gathered") {
    TrainingSetup setup = setup_for("llama3-8b", "h100", 8);
    setup.plan.fsdp = 8;
    const auto run = [&](bool reshard) {
        setup.plan.reshard_after_forward = reshard;
        return simulate_training(build_training_scenario(setup, test::source_dir(), "test"));
    };
    const TrainingReport resharded = run(true), kept = run(false);
    // One layer's weights by hand: q and o (d x d), k and v (d x kv_heads x head_dim), gated MLP 3 x d x ff.
    const double d = 4096, kv = 8 * 128, ff = 14336;
    const double layer_params = 2 * d * d + 2 * d * kv + 3 * d * ff;
    // 32 layers gathered at once instead of two in flight, 2 bytes per weight.
    CHECK(kept.memory.buffers_bytes - resharded.memory.buffers_bytes == doctest::Approx((32 - 2) * layer_params * 2));
    const auto gathers = [](const TrainingReport& r, CommPhase phase) {
        return std::count_if(r.collectives.begin(), r.collectives.end(), [&](const DerivedCollective& c) {
            return c.kind == CollectiveKind::all_gather && c.phase == phase;
        });
    };
    CHECK(gathers(kept, CommPhase::forward) == 4);  // qkv, out, mlp in, mlp out
    CHECK(gathers(kept, CommPhase::backward) == 0);
    CHECK(gathers(resharded, CommPhase::backward) == 4);
}

TEST_CASE("an explicit ZeRO stage is kept beside fsdp, unset, fsdp means ZeRO-3") {
    TrainingSetup setup = setup_for("llama3-8b", "h100", 8);
    setup.plan.fsdp = 4;
    CHECK(build_training_scenario(setup, test::source_dir(), "test").plan.zero_stage() == 3);
    setup.plan.zero = 0;
    CHECK(build_training_scenario(setup, test::source_dir(), "test").plan.zero_stage() == 0);
}

TEST_CASE("plans that do not divide the model or the batch are refused, naming the field") {
    const auto refused = [](TrainingSetup setup, const std::string& field, const std::string& words) {
        try {
            (void)simulate_training(build_training_scenario(setup, test::source_dir(), "plan"));
            FAIL("expected an InputError");
        } catch (const InputError& e) {
            const std::string message = e.what();
            CAPTURE(message);
            CHECK(e.field() == field);
            CHECK(std::string(e.what()).find(words) != std::string::npos);
        }
    };
    TrainingSetup three_way = setup_for("llama3-8b", "h100", 8);
    three_way.plan.dp = 3;
    refused(three_way, "dp", "8 chips");
    TrainingSetup heads = setup_for("llama3-8b", "h100", 6);
    heads.plan.tp = 3;
    heads.global_batch_seqs = 2;
    refused(heads, "tp", "query heads");
    TrainingSetup kv = setup_for("llama3-8b", "h100", 14);
    kv.model = load_hf_config(test::data_file("hf/qwen2-config.json"));  // 28 query heads, 4 KV heads
    kv.plan.tp = 14;
    refused(kv, "tp", "KV heads");
    TrainingSetup layers = setup_for("llama3-8b", "h100", 3);
    layers.plan.pp = 3;
    refused(layers, "pipeline", "layers");
    TrainingSetup experts = setup_for("mixtral-8x7b", "dgx-h100", 24);
    experts.plan.ep = 3;
    refused(experts, "ep", "experts");
    TrainingSetup batch = setup_for("llama3-8b", "h100", 8);
    batch.global_batch_seqs = 12;
    refused(batch, "global_batch", "does not split");
    TrainingSetup micro = setup_for("llama3-8b", "h100", 8);
    micro.global_batch_seqs = 24;
    micro.plan.micro_batch_seqs = 2;
    refused(micro, "micro_batch", "do not divide");
    TrainingSetup reshard = setup_for("llama3-8b", "h100", 8);
    reshard.plan.reshard_after_forward = false;
    refused(reshard, "reshard_after_forward", "fsdp is 1");
}

TEST_CASE("experts: tokens gathered over the expert-tensor ranks, routed k ways, spread over the local experts") {
    ModelSpec moe = small_model();
    moe.moe = MoeSpec{8, 2, 2048, 0, 0};
    const Strategy s = resolve_strategy("megatron-3d-sp", test::source_dir());
    const LayerWork work = derive_layer_work(moe, s, {{"tensor", 4}, {"expert", 2}}, {2, 512, 2, 2, 2}, true);
    const auto expert = std::find_if(work.matmuls.begin(), work.matmuls.end(), [](const auto& m) { return m.name == "experts_in"; });
    REQUIRE(expert != work.matmuls.end());
    // A replica's 2 x 512 tokens (sequence-parallel shards gathered over tensor), times the two expert
    // ranks' tokens, times top-2, over 8 experts; 4 local experts; the gated width split 4 ways.
    CHECK(expert->rows == 2.0 * 512 * 2 * 2 / 8);
    CHECK(expert->instances == 4);
    CHECK(expert->cols == 2.0 * 2048 / 4);
    CHECK(count(work, CollectiveKind::all_to_all, CommPhase::forward, "expert") == 2);  // dispatch, combine
}

TEST_CASE("context parallelism: ring attention passes K/V c-1 times, the all-gather variant gathers them once") {
    ModelSpec m = small_model();
    const AxisSizes sizes = {{"tensor", 2}, {"context", 4}};
    const LayerWork ring = derive_layer_work(m, resolve_strategy("megatron-3d-sp", test::source_dir()), sizes, {1, 4096, 2, 2, 2}, false);
    const LayerWork gather =
        derive_layer_work(m, resolve_strategy("megatron-3d-sp-cp-allgather", test::source_dir()), sizes, {1, 4096, 2, 2, 2}, false);
    // Local K and V: 4096 / 4 queries x (8 / 2 heads) x (128 + 128) x 2 bytes.
    const double local_kv = 4096.0 / 4 * 4 * 256 * 2;
    CHECK(count(ring, CollectiveKind::permute, CommPhase::forward, "context") == 1);
    CHECK(count(gather, CollectiveKind::all_gather, CommPhase::forward, "context") == 1);
    for (const auto& c : ring.collectives)
        if (c.kind == CollectiveKind::permute && c.phase == CommPhase::forward) CHECK(c.bytes == local_kv * 3);
    for (const auto& c : gather.collectives)
        if (c.axes == AxisList{"context"} && c.phase == CommPhase::forward) CHECK(c.bytes == local_kv * 4);
}

TEST_CASE("every strategy computes each weight's full GEMM once per replica: device FLOPs x tensor x context") {
    // small_model: QKV 1024 x (8 + 2 x 8) x 128, output 1024 x 1024, gated MLP 3 x 1024 x 4096.
    const double weights = 1024.0 * 24 * 128 + 1024.0 * 1024 + 3.0 * 1024 * 4096;
    const double micro = 2, seq = 512;
    const std::vector<std::pair<std::string, AxisSizes>> plans = {
        {"megatron-tp", {{"data", 2}, {"tensor", 4}}},
        {"megatron-tp-sp", {{"data", 2}, {"tensor", 4}}},
        {"megatron-3d-sp", {{"data", 2}, {"tensor", 4}, {"context", 2}}},
        {"fsdp-tp", {{"data", 2}, {"fsdp", 2}, {"tensor", 4}}},
        {"fsdp", {{"data", 2}, {"fsdp", 4}}},
        {"maxtext", {{"data", 2}, {"fsdp", 2}, {"tensor", 2}}},
    };
    for (const auto& [strategy, sizes] : plans) {
        const LayerWork work = derive(strategy, sizes, micro, seq);
        double device_flops = 0;
        for (const auto& m : work.matmuls) device_flops += m.flops();
        const auto size = [&](const char* axis) { return sizes.count(axis) ? static_cast<double>(sizes.at(axis)) : 1.0; };
        INFO(strategy);
        CHECK(device_flops * size("tensor") * size("context") == doctest::Approx(2.0 * micro * seq * weights));
    }
}

TEST_CASE("MLA: train derives DeepSeek-V3's low-rank projections, with the weights and FLOPs that serve costs") {
    const ModelSpec m = resolve_model("deepseek-v3", test::source_dir());
    REQUIRE(m.mla);
    // DeepSeek-V3's published attention (config.json): d 7168, 128 heads, q rank 1536, kv rank 512,
    // 128 + 64 query/key head dims, 128 value dims.
    const double d = 7168, heads = 128, q_rank = 1536, kv_rank = 512, nope = 128, rope = 64, v = 128;
    const double attention_params = d * q_rank + q_rank * heads * (nope + rope) + d * (kv_rank + rope) +
                                    kv_rank * heads * (nope + v) + heads * v * d;
    const Strategy s = resolve_strategy("megatron-3d", test::source_dir());
    const double seq = 1024;
    const LayerWork work = derive_layer_work(m, s, {}, {1, seq, 2, 2, 2}, false);
    double weights = 0, flops = 0;
    for (const DerivedMatmul& mm : work.matmuls)
        if (mm.name == "q_down" || mm.name == "q_up" || mm.name == "kv_down" || mm.name == "kv_up" || mm.name == "out") {
            weights += mm.weight_elements;
            flops += mm.flops();
        }
    CHECK(weights == doctest::Approx(attention_params));
    CHECK(flops == doctest::Approx(2.0 * seq * attention_params));

    // serve: prefill of one 1024-token prompt on one chip costs the same projection FLOPs per layer
    // (its per-layer matmul FLOPs hold the MLP's as well: take the dense MLP's and the experts' apart).
    ServingScenario serving;
    serving.model = m;
    serving.chip = resolve_hardware("h100", test::source_dir()).chip;
    serving.strategy = resolve_strategy(kServingStrategy, test::source_dir());
    ClusterShape one_chip;
    one_chip.chips = 1;
    serving.cluster = build_cluster(resolve_hardware("h100", test::source_dir()), one_chip);
    serving.plan.dp = 1;
    serving.mesh = place_serving_plan(serving.cluster, serving.plan);
    serving.batch_seqs = 1;
    serving.input_len = seq;
    serving.output_len = 1;
    const ServingReport r = simulate_serving(serving);
    const MoeSpec& moe = *m.moe;
    const double dense = static_cast<double>(m.dense_layers()) / static_cast<double>(m.n_layers);
    const double experts_touched = expected_experts_touched(static_cast<double>(moe.n_experts), static_cast<double>(moe.top_k), seq);
    const double mlp_flops = dense * 2 * seq * 3 * d * static_cast<double>(m.d_ff) +
                             (1 - dense) * (2 * seq * d * static_cast<double>(moe.n_experts) +  // router
                                            2 * seq * 3 * d * static_cast<double>(moe.n_shared_experts * moe.d_ff_expert) +
                                            2 * (seq * static_cast<double>(moe.top_k) / experts_touched) * 3 * d *
                                                static_cast<double>(moe.d_ff_expert) * experts_touched);
    CHECK(r.prefill.per_layer.matmul_flops == doctest::Approx(2.0 * seq * attention_params + mlp_flops));
}

TEST_CASE("the output layer: logits over the vocabulary split with the MLP's hidden width, never by weight sharding") {
    // Megatron's vocabulary-parallel output layer: tensor 4 -> each chip computes 32000 / 4 columns.
    const double tokens = 2 * 512;
    const OutputWork tp = derive_output_work(small_model(), resolve_strategy("megatron-tp", test::source_dir()),
                                             {{"data", 2}, {"tensor", 4}}, tokens);
    CHECK(tp.vocab_local == doctest::Approx(8000));
    CHECK(tp.logits.flops() == doctest::Approx(2.0 * tokens * 1024 * 8000));
    CHECK(tp.logits.weight_elements == doctest::Approx(1024.0 * 8000));
    CHECK(tp.logits_bytes() == doctest::Approx(tokens * 8000 * 4.0));  // fp32 logits
    // FSDP shards the stored weights but gathers them to compute: the whole vocabulary per chip.
    const OutputWork fsdp = derive_output_work(small_model(), resolve_strategy("fsdp", test::source_dir()), {{"fsdp", 8}}, tokens);
    CHECK(fsdp.vocab_local == doctest::Approx(32000));
}

TEST_CASE("tensor parallelism above the KV heads replicates them: one head per rank, its gradients summed over the copies") {
    // LLaMA-3 8B has 8 KV heads of 128; at tp 16 each pair of ranks holds copies of one.
    const ModelSpec model = resolve_model("llama3-8b", test::source_dir());
    const Strategy s = resolve_strategy("megatron-tp", test::source_dir());
    const LayerWork work = derive_layer_work(model, s, {{"tensor", 16}}, {1, 4096, 2, 2, 2}, false);
    const auto qkv = std::find_if(work.matmuls.begin(), work.matmuls.end(), [](const DerivedMatmul& m) { return m.name == "qkv"; });
    REQUIRE(qkv != work.matmuls.end());
    // 32 query heads / 16 = 2 of width 128, and one K and one V head of 128: 512 columns of d_model 4096.
    CHECK(qkv->cols == 2 * 128 + 2 * 128);
    CHECK(qkv->weight_elements == 4096.0 * 512);
    CHECK(work.attention.kv_elements_per_token == 2 * 128);
    const auto replicas = std::find_if(work.collectives.begin(), work.collectives.end(), [](const DerivedCollective& c) {
        return c.what == "qkv: all-reduce gradients of replicated K/V heads";
    });
    REQUIRE(replicas != work.collectives.end());
    CHECK(replicas->bytes == 4096.0 * 256 * 2);
    CHECK(replicas->phase == CommPhase::gradient);
    // Without replication (tp 8) no such reduction exists.
    const LayerWork split = derive_layer_work(model, s, {{"tensor", 8}}, {1, 4096, 2, 2, 2}, false);
    CHECK(std::none_of(split.collectives.begin(), split.collectives.end(),
                       [](const DerivedCollective& c) { return c.what.find("replicated") != std::string::npos; }));

    // train runs it; tp 12 neither divides nor is a multiple of 8 KV heads and is refused naming the axis.
    TrainingSetup setup = setup_for("llama3-8b", "dgx-h100", 16);
    setup.plan.tp = 16;
    CHECK(simulate_training(build_training_scenario(setup, test::source_dir(), "test")).step_time_s > 0);
    setup.chips = 12;
    setup.global_batch_seqs = 12;
    setup.plan.tp = 12;
    setup.model.n_heads = 48;  // so that the query heads split 12 ways
    setup.hardware = resolve_hardware("h100", test::source_dir());
    try {
        (void)simulate_training(build_training_scenario(setup, test::source_dir(), "test"));
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("KV heads") != std::string::npos);
    }
}

// Context parallelism splits each sequence over the ranks, and each attention kernel call holds one
// rank's s / cp queries: the measured kernel's sequence ramp (time at peak x (s + half) / s) applies at
// s / cp. LLaMA-3 8B at 8,192 tokens on 8 H100s: the same attention FLOPs per rank with cp 1 (dp 8,
// two micro-batches a replica) and cp 4 (dp 2, eight micro-batches of a quarter each). The ratio of
// their attention times, worked here from the chip file's cuDNN block (forward 1 and backward 2.5
// FLOP shares at their own peak fractions and ramps), is the ramp's alone.
TEST_CASE("context parallelism: an attention kernel call holds s / cp queries, and its sequence ramp is theirs") {
    const nlohmann::json chip = test::read_json(test::source_dir() / "hardware" / "chips" / "h100-sxm.json");
    const nlohmann::json& cudnn = chip.at("kernels").at("attention").at("cudnn");
    const auto seconds_per_flop = [&](double seq) {
        double total = 0;
        for (const auto& [pass, share] : {std::pair{"forward", 1.0}, std::pair{"backward", 2.5}}) {
            const double fraction = cudnn.at(pass).at("peak_fraction"), half = cudnn.at(pass).at("half_seq");
            total += share * (seq + half) / (seq * fraction);
        }
        return total;
    };
    const auto attention_s = [](std::int64_t cp) {
        TrainingSetup setup = setup_for("llama3-8b", "h100", 8);
        setup.seq_len = 8192;
        setup.global_batch_seqs = 16;
        setup.plan.cp = cp;
        setup.stack = resolve_stack("nemo", test::source_dir());
        return test::component_s(simulate_training(build_training_scenario(setup, test::source_dir(), "test")), "attention");
    };
    CHECK(attention_s(4) / attention_s(1) == doctest::Approx(seconds_per_flop(8192.0 / 4) / seconds_per_flop(8192.0)).scale(0).epsilon(1e-6));
    CHECK(attention_s(4) > attention_s(1));  // 2,048 queries a call fill the tiles less than 8,192
}

// Activation memory is read off the op list: each tensor the backward pass may need, at the shape
// its op has on this device. An MLA + MoE layer under Megatron's tensor 2 with sequence parallelism
// and experts over 2 ranks, 2 x 512 tokens per replica, by hand: the residual stream is split over
// tensor; the latents (q 64, kv 32 wide) are whole on every tensor rank, as their down projections
// leave them; q, k, v split by heads, the keys carrying the 8-wide rotary part in every head; each
// token is dispatched to its top 2 experts (the shared expert reads the norm output in place).
TEST_CASE("saved tensors of an MLA + MoE layer follow its ops' local shapes, by hand") {
    ModelSpec m = small_model();
    m.mla = MlaSpec{64, 32, 16, 8, 16};  // q rank, kv rank, nope, rope, v
    m.moe = MoeSpec{8, 2, 512, 1, 0};    // experts, top-k, expert width, shared, first dense
    const Strategy s = resolve_strategy("megatron-3d-sp", test::source_dir());
    const LayerWork work = derive_layer_work(m, s, {{"tensor", 2}, {"expert", 2}}, {2, 512, 2, 2, 2}, true);
    const auto saved = [&](SavedTensor t) { return work.saved_elements[static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(t)))]; };
    const double tokens = 2 * 512, D = 1024, heads = 8 / 2;
    CHECK(saved(SavedTensor::layer_input) == tokens / 2 * D);
    CHECK(saved(SavedTensor::mla_latents) == tokens * (64 + 32));
    CHECK(saved(SavedTensor::qkv) == tokens * heads * ((16 + 8) + (16 + 8) + 16));
    CHECK(saved(SavedTensor::attention_output) == tokens * heads * 16);
    CHECK(saved(SavedTensor::attention_stats) == 2 * heads * tokens);
    // Routed: the two expert ranks' tokens gathered over tensor, top 2, gate and up 2 x 512 split 2
    // ways; the shared expert the same on the replica's tokens once.
    CHECK(saved(SavedTensor::mlp_hidden) == tokens * 2 * (2 * 512) / 2 + tokens * (2 * 512) / 2);
    CHECK(saved(SavedTensor::mlp_activation) == tokens * 2 * 512 / 2 + tokens * 512 / 2);
    // The norm output, the router's 8 logits per token, and the top-2 copies dispatched.
    CHECK(saved(SavedTensor::mlp_norm_output) == tokens / 2 * D + tokens / 2 * 8 + tokens * 2 * D);
}
