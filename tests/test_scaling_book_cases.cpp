// Every case of the scaling book's reference set whose topic this part of Ridgeline covers
// (roofline, hardware, transformer_math, kv_cache, memory, moe) is computed here through
// Ridgeline's own functions from the case's inputs; expected value and tolerance come from the case.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/layer_ops.hpp"
#include "engine/roofline.hpp"
#include "engine/scaling_rules.hpp"
#include "hardware/catalog.hpp"
#include "io/json_reader.hpp"
#include "model/model_catalog.hpp"
#include "model/training_state.hpp"
#include "model/transformer_math.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using nlohmann::json;

namespace {

const std::set<std::string> kTopics = {"roofline", "hardware", "transformer_math", "kv_cache", "memory", "moe"};

double num(const json& inputs, const char* key) { return inputs.at(key).get<double>(); }

ChipSpec chip_with(double bf16_flops, double hbm_bw_Bps) {
    ChipSpec chip;
    chip.name = "case";
    chip.peak_flops_per_s[index_of(Dtype::bf16)] = bf16_flops;
    chip.peak_flops_per_s[index_of(Dtype::fp16)] = bf16_flops;
    chip.hbm_bw_Bps = hbm_bw_Bps;
    chip.host_link_Bps = hbm_bw_Bps;
    chip.scale_out.bw_per_chip_Bps_one_way = hbm_bw_Bps;
    return chip;
}

double ridge_at(const ChipSpec& chip, const std::string& level, Dtype dtype) {
    for (const RidgePoint& point : ridge_points(Hardware{chip, std::nullopt}))
        if (point.level == level && point.dtype == dtype) return point.intensity_flops_per_byte;
    FAIL("no ridge point " << level);
    return 0;
}

// A dense GQA decoder with a gated MLP, RMSNorm and untied embeddings unless said otherwise.
ModelSpec dense_model(const json& in, std::int64_t layers, std::int64_t d_model, std::int64_t d_ff,
                      std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim, std::int64_t vocab) {
    ModelSpec model;
    model.name = "case";
    model.n_layers = layers;
    model.d_model = d_model;
    model.d_ff = d_ff;
    model.n_heads = heads;
    model.n_kv_heads = kv_heads;
    model.head_dim = head_dim;
    model.vocab_size = vocab;
    model.tied_embeddings = in.value("tied_embeddings", false);
    return model;
}

ModelSpec model_from_config(const json& in) {
    const auto i = [&](const char* key) { return in.at(key).get<std::int64_t>(); };
    return dense_model(in, i("L"), i("D"), i("F"), i("N"), i("K"), i("H"), i("V"));
}

// The model of the inference chapter's worked problems (inf-09 onward): L=64, D=4096, F=16384,
// N=32, K=8, H=256, V=32128, tied embeddings.
ModelSpec inference_chapter_model() {
    json in = {{"tied_embeddings", true}};
    return dense_model(in, 64, 4096, 16384, 32, 8, 256, 32128);
}

ModelSpec with_moe(ModelSpec model, std::int64_t experts, std::int64_t top_k) {
    model.moe = MoeSpec{experts, top_k, model.d_ff, 0, 0};
    return model;
}

// Token count at which the compute and memory times of a matmul family cross, from two
// evaluations of the (linear in B) roofline.
double crossing_rows(const std::function<RooflineTime(double)>& at_rows) {
    const RooflineTime zero = at_rows(0), one = at_rows(1);
    const double compute_slope = one.compute_s - zero.compute_s;
    const double memory_slope = one.memory_s - zero.memory_s;
    return (zero.memory_s - zero.compute_s) / (compute_slope - memory_slope);
}

const std::map<std::string, test::CaseFunction>& case_functions() {
    static const std::map<std::string, test::CaseFunction> functions = {
        // --- roofline ---
        {"roofline-01", [](const json& in) { return roofline_time(num(in, "flops"), 0, num(in, "bf16_flops_per_s"), 1).compute_s * 1e3; }},
        {"roofline-02", [](const json& in) { return roofline_time(num(in, "flops"), 0, num(in, "bf16_flops_per_s"), 1).compute_s * 1e3; }},
        {"roofline-03", [](const json& in) { return ridge_at(chip_with(num(in, "bf16_flops_per_s"), num(in, "hbm_bw_bytes_per_s")), "hbm", Dtype::bf16); }},
        {"roofline-04", [](const json& in) {
             const double n = num(in, "N");  // x . y as [1, N] x [N, 1]
             return matmul_roofline(chip_with(1, 1), {1, n, 1}, {}).intensity_flops_per_byte();
         }},
        {"roofline-05", [](const json& in) {
             // Per chip: [B, D/2] x [D/2, F] locally, then 2BF bytes of partial sums over the link.
             const double chips = num(in, "chips"), bytes = num(in, "dtype_bytes");
             const double rows = 1024, cols = 1024;
             const auto at_d = [&](double d_model) {
                 return roofline_time(2 * rows * (d_model / chips) * cols, bytes * rows * cols,
                                      num(in, "bf16_flops_per_s"), num(in, "link_bw_bytes_per_s"));
             };
             return crossing_rows(at_d);
         }},
        {"roofline-06", [](const json& in) {
             ChipSpec chip = chip_with(1, num(in, "hbm_bw_bytes_per_s"));
             chip.peak_flops_per_s[index_of(Dtype::int8)] = num(in, "int8_ops_per_s");
             return critical_batch_tokens(chip, {Dtype::int8, Dtype::int8, Dtype::int8});
         }},
        {"roofline-07", [](const json& in) {
             return critical_batch_tokens(chip_with(num(in, "bf16_flops_per_s"), num(in, "hbm_bw_bytes_per_s")),
                                          {Dtype::bf16, Dtype::int8, Dtype::bf16});
         }},
        {"roofline-08", [](const json& in) {
             return critical_batch_tokens(chip_with(num(in, "bf16_flops_per_s"), num(in, "hbm_bw_bytes_per_s")), {});
         }},
        {"roofline-09", [](const json& in) {
             // A different [D, F] matrix per example: each example is its own [1, D] x [D, F].
             const MatmulDtypes int8 = {Dtype::int8, Dtype::int8, Dtype::int8};
             ChipSpec chip = chip_with(1, 1);
             chip.peak_flops_per_s[index_of(Dtype::int8)] = 1;
             return matmul_roofline(chip, {1, num(in, "D"), num(in, "F")}, int8).intensity_flops_per_byte();
         }},
        // --- hardware ---
        {"tpu-01", [](const json& in) {
             const double bytes_per_chip = num(in, "params") * num(in, "dtype_bytes") / num(in, "chips");
             return roofline_time(0, bytes_per_chip, 1, num(in, "hbm_bw_bytes_per_s")).lower_bound_s() * 1e3;
         }},
        {"tpu-02", [](const json&) {
             const Hardware pod = resolve_hardware("tpu-v5e-pod", test::source_dir());
             return static_cast<double>(pod.system->scale_up.max_domain_chips()) * pod.chip.peak_flops(Dtype::bf16);
         }},
        {"tpu-03", [](const json&) {
             const Hardware pod = resolve_hardware("tpu-v5p-pod", test::source_dir());
             return static_cast<double>(pod.system->scale_up.max_domain_chips() / pod.system->chips_per_host);
         }},
        {"tpu-04", [](const json&) {
             const Hardware pod = resolve_hardware("tpu-v5p-pod", test::source_dir());
             return static_cast<double>(pod.system->scale_up.max_domain_chips()) * pod.chip.peak_flops(Dtype::bf16);
         }},
        {"tpu-05", [](const json& in) {
             // The book counts 96 GB per chip; the chip count comes from the shipped pod.
             const Hardware pod = resolve_hardware("tpu-v5p-pod", test::source_dir());
             return static_cast<double>(pod.system->scale_up.max_domain_chips()) * num(in, "hbm_per_chip_GB");
         }},
        {"tpu-06", [](const json& in) {
             ChipSpec chip = chip_with(num(in, "bf16_flops_per_s"), 1);
             chip.host_link_Bps = num(in, "pcie_bw_bytes_per_s");
             return ridge_at(chip, "host", Dtype::bf16);
         }},
        {"tpu-07", [](const json& in) {
             ChipSpec chip = chip_with(1, num(in, "hbm_bw_bytes_per_s"));
             chip.peak_flops_per_s[index_of(Dtype::int8)] = num(in, "int8_ops_per_s");
             const auto shape = in.at("W_shape");
             const double out = shape[0].get<double>(), contract = shape[1].get<double>();
             return crossing_rows([&](double rows) {
                 return matmul_roofline(chip, {rows, contract, out}, {Dtype::int8, Dtype::int8, Dtype::int8});
             });
         }},
        {"tpu-08", [](const json& in) {
             ChipSpec chip = chip_with(1, num(in, "vmem_bw_bytes_per_s"));  // VMEM in the place of HBM
             chip.peak_flops_per_s[index_of(Dtype::int8)] = num(in, "int8_ops_per_s");
             return critical_batch_tokens(chip, {Dtype::int8, Dtype::int8, Dtype::int8});
         }},
        // Vector units, from the shipped chips: the book's figures are what the files must reproduce.
        {"tpu-11", [](const json&) {
             const VectorUnitSpec vpu = *resolve_hardware("tpu-v5p", test::source_dir()).chip.vector_unit;
             return vpu.flops_per_s(false) / vpu.units;  // per core, one op per ALU per cycle
         }},
        {"gpu-01", [](const json&) { return resolve_hardware("h100-sxm", test::source_dir()).chip.vector_unit->lanes(); }},
        {"gpu-02", [](const json&) {
             return resolve_hardware("h100-sxm", test::source_dir()).chip.vector_unit->flops_per_s(false) / 1e12;
         }},
        {"gpu-06", [](const json&) {
             return resolve_hardware("h100-sxm", test::source_dir()).chip.vector_unit->shared_memory_bytes() / 1e6;
         }},
        {"gpu-07", [](const json& in) {
             // The clock at which the shipped B200's CUDA cores reach the quoted vector FLOP/s.
             VectorUnitSpec vector = *resolve_hardware("b200", test::source_dir()).chip.vector_unit;
             vector.clock_hz = 1.0;
             return num(in, "vector_flops_per_s") / vector.flops_per_s(num(in, "flops_per_cycle_per_core") == 2) / 1e9;
         }},
        {"gpu-03", [](const json& in) { return ridge_at(chip_with(num(in, "bf16_flops_per_s"), num(in, "hbm_bw_bytes_per_s")), "hbm", Dtype::bf16); }},
        {"gpu-04", [](const json& in) {
             const ChipSpec chip = chip_with(1e30, num(in, "hbm_bw_bytes_per_s"));  // bandwidth-bound: peak irrelevant
             return matmul_roofline(chip, {num(in, "B"), num(in, "D"), num(in, "F")}, {Dtype::fp16, Dtype::fp16, Dtype::fp16})
                        .lower_bound_s() * 1e6;
         }},
        {"gpu-05", [](const json& in) {
             const Hardware b200 = resolve_hardware("b200", test::source_dir());
             ChipSpec chip = chip_with(num(in, "bf16_flops_per_s"), b200.chip.hbm_bw_Bps);
             return matmul_roofline(chip, {num(in, "B"), num(in, "D"), num(in, "F")}, {Dtype::fp16, Dtype::fp16, Dtype::fp16})
                        .lower_bound_s() * 1e6;
         }},
        {"gpu-08", [](const json& in) {
             const double n = num(in, "N");
             const Hardware h100 = resolve_hardware("h100-sxm", test::source_dir());
             return roofline_time(n, n * num(in, "bytes_per_elem"), h100.chip.peak_flops(Dtype::fp32),
                                  num(in, "hbm_bw_bytes_per_s")).lower_bound_s() * 1e3;
         }},
        {"prof-01", [](const json& in) {
             const ChipSpec chip = chip_with(num(in, "cores") * num(in, "flops_per_core"), 1e30);
             return matmul_roofline(chip, {num(in, "B"), num(in, "D"), num(in, "F")}, {}).lower_bound_s() * 1e3;
         }},
        // --- transformer math ---
        {"tf-01", [](const json& in) {
             const auto i = [&](const char* key) { return in.at(key).get<std::int64_t>(); };
             return count_params(dense_model(in, i("L"), i("D"), i("F"), 32, 32, i("NH") / 32, i("V"))).total;
         }},
        {"tf-02", [](const json& in) {
             const auto D = in.at("D").get<std::int64_t>(), F = in.at("F").get<std::int64_t>();
             const ParamCounts p = count_params(dense_model(in, 1, D, F, 32, 32, D / 32, 1));
             return p.attention_per_layer / (p.attention_per_layer + p.dense_mlp_per_layer);
         }},
        {"tf-04", [](const json& in) {
             // F = 4D, D = NH, N = K; T where attention FLOPs equal the weight-matmul FLOPs.
             const auto D = in.at("D").get<std::int64_t>();
             const ModelSpec model = dense_model(in, 1, D, 4 * D, D / 128, D / 128, 128, 1);
             const FlopsPerToken per_key = flops_per_token(model, 1, /*causal=*/false);
             return per_key.matmul_forward / per_key.attention_forward;
         }},
        {"tf-05", [](const json& in) {
             // T where dot-product attention FLOPs equal the QKVO projection FLOPs (MHA).
             const auto D = in.at("D").get<std::int64_t>();
             const ModelSpec model = dense_model(in, 1, D, 1, D / 128, D / 128, 128, 1);
             const double qkvo_flops = 2 * count_params(model).attention_per_layer;
             return qkvo_flops / flops_per_token(model, 1, /*causal=*/false).attention_forward;
         }},
        {"tf-10", [](const json& in) {
             // 6N of a dense model with N parameters: scale LLaMA-3 70B's shape to exactly N by layers.
             ModelSpec model = resolve_model("llama3-70b", test::source_dir());
             return six_n_flops_per_token(model) * num(in, "params") / count_params(model).active;
         }},
        {"train-15", [](const json& in) { return count_params(model_from_config(in)).total; }},
        {"atrain-01", [](const json& in) { return count_params(model_from_config(in)).total; }},
        {"atrain-10", [](const json& in) { return count_params(model_from_config(in)).total; }},
        {"atrain-12", [](const json& in) { return count_params(model_from_config(in)).total; }},
        {"inf-09", [](const json&) { return count_params(inference_chapter_model()).total; }},
        {"ainf-17", [](const json& in) {
             ChipSpec chip = chip_with(num(in, "bf16_flops_per_s"), 1);
             chip.price_usd_per_chip_hour = num(in, "usd_per_hour");
             return *peak_flops_per_usd(chip, Dtype::bf16);
         }},
        {"ainf-18", [](const json&) {
             return flops_per_token(resolve_model("llama3-405b", test::source_dir()), 1, true).matmul_forward;
         }},
        // --- KV cache ---
        {"tf-03", [](const json& in) {
             const auto i = [&](const char* key) { return in.at(key).get<std::int64_t>(); };
             return kv_cache_bytes_per_token(dense_model(in, i("L"), 4096, 1, i("K"), i("K"), i("H"), 1), Dtype::int8);
         }},
        {"tf-08", [](const json& in) {
             const auto i = [&](const char* key) { return in.at(key).get<std::int64_t>(); };
             const ModelSpec model = dense_model(in, i("L"), i("KH"), 1, i("KH") / 128, i("KH") / 128, 128, 1);
             return kv_cache_bytes_per_token(model, Dtype::int8) * num(in, "S") / std::pow(2.0, 30);
         }},
        {"inf-04", [](const json& in) {
             const auto i = [&](const char* key) { return in.at(key).get<std::int64_t>(); };
             const ModelSpec model = dense_model(in, i("L"), i("K") * i("H"), 1, i("K"), i("K"), i("H"), 1);
             return kv_cache_bytes_per_token(model, Dtype::bf16) * num(in, "T") / 1e9;
         }},
        {"inf-10", [](const json&) { return kv_cache_bytes_per_token(inference_chapter_model(), Dtype::int8); }},
        {"ainf-01", [](const json&) {
             return kv_cache_bytes_per_token(resolve_model("llama3-70b", test::source_dir()), Dtype::int8);
         }},
        // --- memory ---
        {"tf-09", [](const json& in) {
             // MHA with F = 4D and a gated MLP keeps 20 [T, D]-sized tensors per layer when the
             // attention core is fused (no score matrix saved).
             const auto D = in.at("D").get<std::int64_t>();
             const ModelSpec model = dense_model(in, in.at("L").get<std::int64_t>(), D, 4 * D, D / 128, D / 128, 128, 1);
             return saved_elements_per_token(model, 1, saved_tensors(static_cast<RecomputeModules>(RecomputeModule::core_attention), AttentionKernel::fused, false)) * bytes_per_element(Dtype::bf16) *
                    num(in, "tokens") * static_cast<double>(model.n_layers) / 1e12;
         }},
        {"train-16", [](const json& in) {
             // Checkpoint only the outputs of the three MLP matmuls (gate, up, down).
             const auto i = [&](const char* key) { return in.at(key).get<std::int64_t>(); };
             const ModelSpec model = dense_model(in, i("L"), i("D"), i("F"), 40, 40, 128, 1);
             const SavedTensors policy = SavedTensor::mlp_hidden | SavedTensor::mlp_output;
             return saved_elements_per_token(model, 1, policy) * bytes_per_element(Dtype::bf16) *
                    num(in, "B_tokens") * static_cast<double>(model.n_layers) / 1e12;
         }},
        {"atrain-05", [](const json& in) {
             // bf16 weights + fp32 Adam moments, and the four [B, D] norm inputs/outputs of each layer kept.
             const auto i = [&](const char* key) { return in.at(key).get<std::int64_t>(); };
             const ModelSpec model = dense_model(in, i("L"), i("D"), 1, 64, 8, 128, 1);
             const SavedTensors policy = SavedTensor::layer_input | SavedTensor::attention_norm_output |
                                         SavedTensor::mlp_norm_input | SavedTensor::mlp_norm_output;
             const double activations = saved_elements_per_token(model, 1, policy) *
                                        bytes_per_element(Dtype::bf16) * num(in, "batch_tokens") * static_cast<double>(i("L"));
             return (training_state_bytes(num(in, "params"), TrainingPrecision::bf16_params_fp32_moments()) + activations) / 1e12;
         }},
        {"atrain-06", [](const json& in) { return chips_to_hold(num(in, "total_bytes"), num(in, "hbm_bytes")); }},
        {"gpu-23", [](const json& in) {
             CHECK(TrainingPrecision::bf16_params_fp32_moments().bytes_per_param() == num(in, "bytes_per_param"));
             return chips_to_hold(training_state_bytes(num(in, "params"), TrainingPrecision::bf16_params_fp32_moments()),
                                  num(in, "hbm_bytes"));
         }},
        // --- MoE ---
        {"tf-07", [](const json& in) {
             const double dense = critical_batch_tokens(chip_with(num(in, "hbm_intensity"), 1), {Dtype::bf16, Dtype::int8, Dtype::bf16});
             return moe_critical_batch_tokens(dense, num(in, "E"), num(in, "k"));
         }},
        {"inf-13", [](const json& in) {
             return count_params(with_moe(inference_chapter_model(), in.at("E").get<std::int64_t>(), in.at("k").get<std::int64_t>())).total;
         }},
        {"inf-14", [](const json& in) {
             return count_params(with_moe(inference_chapter_model(), in.at("E").get<std::int64_t>(), in.at("k").get<std::int64_t>())).active;
         }},
        {"inf-15", [](const json& in) {
             const double dense = critical_batch_tokens(chip_with(num(in, "hbm_intensity"), 1), {});
             return moe_critical_batch_tokens(dense, num(in, "E"), num(in, "k"));
         }},
        {"gpu-18", [](const json& in) {
             return data_parallel_critical_tokens_per_chip(num(in, "C_over_W_node"), 1, num(in, "E"), num(in, "k"));
         }},
    };
    return functions;
}

json load_cases() {
    return io::parse_json_file(test::data_file("reference/scaling-book-cases.json"));
}

}  // namespace

TEST_CASE("scaling-book reference cases of the foundation topics") {
    const json cases = load_cases();
    const int checked = test::check_reference_cases(kTopics, case_functions());
    CHECK(checked == 54);
    CHECK(checked == static_cast<int>(case_functions().size()));
}

// The shipped hardware files must agree with the figures the book works with, within each case's tolerance.
// (PCIe is not compared: the book's v6e worked problem uses 1.6e10 while its spec table gives 3.2e10.)
TEST_CASE("shipped chips agree with the chip figures the book's cases use") {
    const std::map<std::string, std::string> chip_names = {{"H100", "h100-sxm"}, {"TPU v6e", "tpu-v6e"},
                                                           {"TPU v5e", "tpu-v5e"}, {"TPU v4p", "tpu-v4"}};
    int compared = 0;
    for (const json& c : load_cases()) {
        const json& in = c.at("inputs");
        if (!in.contains("chip") || !chip_names.count(in.at("chip").get<std::string>())) continue;
        const Hardware hardware = resolve_hardware(chip_names.at(in.at("chip").get<std::string>()), test::source_dir());
        const double tolerance = std::max(c.at("tolerance_pct").get<double>() / 100.0, 0.02);
        CAPTURE(c.at("id").get<std::string>());
        if (in.contains("bf16_flops_per_s")) {
            CHECK(test::relative_error(hardware.chip.peak_flops(Dtype::bf16), num(in, "bf16_flops_per_s")) <= tolerance);
            ++compared;
        }
        if (in.contains("hbm_bw_bytes_per_s")) {
            CHECK(test::relative_error(hardware.chip.hbm_bw_Bps, num(in, "hbm_bw_bytes_per_s")) <= tolerance + 0.01);
            ++compared;
        }
    }
    CHECK(compared >= 5);
}

TEST_CASE("shipped GPUs' SM counts and clocks agree with the book's GPU table") {
    // The SM count sizes the share a collective's NCCL blocks take from hidden compute
    // (engine/training.cpp): it must be the chip's, as the book's Part 12 table gives it.
    const json book = test::read_json(test::data_file("reference/scaling-book-hardware.json")).at("gpu");
    const std::map<std::string, std::vector<std::string>> chips = {
        {"A100", {"a100-40gb", "a100-80gb"}}, {"H100", {"h100-sxm"}}, {"B200", {"b200"}}};
    for (const auto& [name, shipped] : chips) {
        const json& gpu = book.at(name);
        for (const std::string& chip_name : shipped) {
            CAPTURE(chip_name);
            const Hardware hardware = resolve_hardware(chip_name, test::source_dir());
            REQUIRE(hardware.chip.vector_unit);
            CHECK(hardware.chip.vector_unit->units == gpu.at("sms").get<int>());
            if (gpu.contains("clock_hz") && gpu.at("clock_hz").is_array()) {
                CHECK(hardware.chip.vector_unit->clock_hz >= gpu.at("clock_hz")[0].get<double>() * 0.99);
                CHECK(hardware.chip.vector_unit->clock_hz <= gpu.at("clock_hz")[1].get<double>() * 1.01);
            }
        }
    }
}
