// The kernel model against kernels measured on a real H100 80GB (tests/data/reference/
// gpu-kernels-h100.json): every GEMM and attention case, predicted from h100-sxm's "kernels"
// block, within the bounds (median |error| <= 10%, max <= 25%).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/roofline.hpp"
#include "hardware/catalog.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

const nlohmann::json& measurements() {
    static const nlohmann::json doc = test::read_json(test::data_file("reference/gpu-kernels-h100.json"));
    return doc;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void check_errors(const std::vector<double>& errors, const char* what) {
    REQUIRE_FALSE(errors.empty());
    const double med = median(errors), worst = *std::max_element(errors.begin(), errors.end());
    MESSAGE(std::string(what) << ": " << errors.size() << " cases, median |error| " << 100 * med << "%, max " << 100 * worst << "%");
    CHECK(med <= 0.10);
    CHECK(worst <= 0.25);
}

// A copy of a shipped chip file without its kernel model, as a calibration fit writes one.
std::filesystem::path chip_without_kernels(const std::string& name) {
    nlohmann::json chip = test::read_json(test::source_dir() / "hardware" / "chips" / (name + ".json"));
    chip.erase("kernels");
    const auto path = test::scratch_dir("kernels") / (name + "-bare.json");
    std::ofstream(path) << chip.dump(2);
    return path;
}

}  // namespace

TEST_CASE("kernel model: every measured H100 GEMM (bf16 and fp8, M = 1..16384) within 10% median, 25% max") {
    const ChipSpec chip = resolve_hardware("h100-sxm", test::source_dir()).chip;
    std::vector<double> errors;
    for (const auto& g : measurements()["gemm"]) {
        const double m = g["M"], k = g["K"], n = g["N"];
        const bool fp8 = g["dtype"].get<std::string>().rfind("fp8", 0) == 0;
        const Dtype dtype = fp8 ? Dtype::fp8 : Dtype::bf16;
        const double predicted = gemm_time(chip, {m, k, n, 1, k * n}, {dtype, dtype, dtype}).lower_bound_s();
        errors.push_back(std::abs(predicted / g["seconds"].get<double>() - 1.0));
    }
    CHECK(errors.size() == 40);
    check_errors(errors, "H100 GEMMs");
}

TEST_CASE("kernel model: measured H100 attention, each kernel family, forward and backward apart") {
    const ChipSpec chip = resolve_hardware("h100-sxm", test::source_dir()).chip;
    const std::vector<double> errors = test::attention_pass_errors(chip, measurements()["attention"]);
    CHECK(errors.size() == 12);
    check_errors(errors, "H100 attention passes");
}

TEST_CASE("kernel model: memory-bound kernels move their bytes at the measured fraction of HBM") {
    const ChipSpec chip = resolve_hardware("h100-sxm", test::source_dir()).chip;
    for (const auto& k : measurements()["memory_bound"]) {
        const double predicted = memory_bound_s(chip, k["kernel"], k["bytes"]);
        CHECK(std::abs(predicted / k["seconds"].get<double>() - 1.0) < 0.10);
    }
}

TEST_CASE("kernel model: H200 attention is the H100 die's, its GEMMs its own measurement") {
    const ChipSpec h100 = resolve_hardware("h100-sxm", test::source_dir()).chip;
    const ChipSpec h200 = resolve_hardware("h200", test::source_dir()).chip;
    // Same tensor cores at the same bf16 peak: the same attention pass takes the same time on both.
    const double flops = 4.0 * 4 * 32 * 4096.0 * 4096 * 128 / 2;
    for (const std::string family : {"cudnn", "flash-attention-2"})
        CHECK(attention_time(h200, family, AttentionPassKind::forward, flops, 0, 4096).lower_bound_s() ==
              doctest::Approx(attention_time(h100, family, AttentionPassKind::forward, flops, 0, 4096).lower_bound_s()));
    // The GEMM block names the H200 measurements it was fitted to (tests/test_gpu_measurements.cpp checks it).
    CHECK(h200.kernels->source.find("h200-calibration-2026-11-26.json") != std::string::npos);
}

TEST_CASE("kernel model: a chip or dtype with no measurements is named, not given ideal efficiency") {
    const ChipSpec h100 = resolve_hardware("h100-sxm", test::source_dir()).chip;
    const Gemm g{1024, 1024, 1024, 1, 1024.0 * 1024};
    CHECK_THROWS_WITH_AS((void)gemm_time(h100, g, {Dtype::int8, Dtype::int8, Dtype::int8}), doctest::Contains("kernels.gemm.dtypes.int8"), InputError);
    CHECK_THROWS_WITH_AS((void)attention_time(h100, "splash", AttentionPassKind::forward, 1e12, 0, 4096), doctest::Contains("cudnn"), InputError);
    CHECK_THROWS_WITH_AS((void)memory_bound_s(h100, "layernorm_fwd", 1e9), doctest::Contains("rmsnorm_fwd"), InputError);
    // fp16 runs on the bf16 path at the bf16 rate.
    const MatmulDtypes fp16{Dtype::fp16, Dtype::fp16, Dtype::fp16}, bf16{Dtype::bf16, Dtype::bf16, Dtype::bf16};
    CHECK(gemm_time(h100, g, fp16).lower_bound_s() == doctest::Approx(gemm_time(h100, g, bf16).lower_bound_s()));
}

TEST_CASE("roofline --matmul --json reports the kernel model's prediction beside the ideal bounds") {
    // The measured bf16 GEMM 4096 x 4096 x 14336 on the H100.
    double measured_s = 0;
    for (const auto& g : measurements()["gemm"])
        if (g["dtype"] == "bf16" && g["M"] == 4096 && g["K"] == 4096 && g["N"] == 14336) measured_s = g["seconds"];
    REQUIRE(measured_s > 0);
    const auto result = test::run_ridgeline("roofline --hardware h100 --matmul 4096,4096,14336 --json");
    REQUIRE(result.exit_code == 0);
    const auto doc = nlohmann::json::parse(result.out);
    CHECK(std::abs(doc["predicted_s"].get<double>() / measured_s - 1.0) < 0.10);
    CHECK(doc["predicted_s"].get<double>() > doc["lower_bound_s"].get<double>());  // real kernels miss the ideal
    // A chip with no kernel model (a calibration fit, say) says so instead of assuming ideal kernels.
    const auto bare = test::run_ridgeline("roofline --hardware " + chip_without_kernels("tpu-v5e").string() + " --matmul 4096,4096,14336 --json");
    REQUIRE(bare.exit_code == 0);
    const auto bare_doc = nlohmann::json::parse(bare.out);
    CHECK(bare_doc["predicted_s"].is_null());
    CHECK(bare_doc["predicted_note"].get<std::string>().find("no measured kernel model") != std::string::npos);
}

TEST_CASE("kernel model: grouped (MoE) expert GEMMs, 16 to 4,096 rows per expert, from the dense GEMM model alone") {
    // Nothing is fitted on grouped GEMMs: below ~256 rows per expert they stream every expert's
    // weights, above it they run as dense GEMMs of their rows. Forward [M, K] x [K, N]; the input
    // gradient [M, N] x [N, K] reads the weights; the weight gradient [K, M] x [M, N] writes them.
    const ChipSpec chip = resolve_hardware("h100-sxm", test::source_dir()).chip;
    const MatmulDtypes bf16{Dtype::bf16, Dtype::bf16, Dtype::bf16};
    std::vector<double> errors;
    for (const auto& g : measurements()["grouped_gemm"]) {
        const double e = g["experts"], m = g["rows_per_expert"], k = g["K"], n = g["N"];
        const std::string pass = g["pass"];
        const Gemm gemm = pass == "fwd" ? Gemm{m, k, n, e, e * k * n} : pass == "dgrad" ? Gemm{m, n, k, e, e * k * n} : Gemm{k, m, n, e, 0};
        errors.push_back(std::abs(gemm_time(chip, gemm, bf16).lower_bound_s() / g["seconds"].get<double>() - 1.0));
    }
    CHECK(errors.size() == 96);
    std::sort(errors.begin(), errors.end());
    MESSAGE("H100 grouped GEMMs: " << errors.size() << " cases, median |error| " << 100 * median(errors) << "%, max " << 100 * errors.back() << "%");
    CHECK(median(errors) <= 0.15);
    CHECK(errors.back() <= 0.30);
}

TEST_CASE("kernel model: fine-grained MoE expert GEMMs (torch._grouped_mm, 32 to 1,024 rows per expert) on a real H100") {
    // tests/data/reference/gpu-moe-fp8-decode-h100.json: Qwen3-30B-A3B's and a GPT-OSS-120B-like MoE's
    // forward expert GEMMs at expert parallelism 8 (16 local experts), as scripts/gpu/moe_fp8_decode.py
    // timed them on 2026-11-27; nothing is fitted on them.
    const ChipSpec chip = resolve_hardware("h100-sxm", test::source_dir()).chip;
    const MatmulDtypes bf16{Dtype::bf16, Dtype::bf16, Dtype::bf16};
    const auto measured = test::read_json(test::data_file("reference/gpu-moe-fp8-decode-h100.json"));
    std::vector<double> errors;
    for (const auto& g : measured["moe_grouped_gemm"]) {
        if (!g.contains("grouped_mm")) continue;  // the per-model totals
        const double e = g["experts_local"], m = g["rows_per_expert"], k = g["K"], n = g["N"];
        const double seconds = g["grouped_mm"]["median_s"];
        errors.push_back(std::abs(gemm_time(chip, Gemm{m, k, n, e, e * k * n}, bf16).lower_bound_s() / seconds - 1.0));
    }
    REQUIRE(errors.size() == 12);
    std::sort(errors.begin(), errors.end());
    MESSAGE("H100 fine-grained MoE GEMMs: " << errors.size() << " cases, median |error| " << 100 * median(errors) << "%, max " << 100 * errors.back() << "%");
    CHECK(median(errors) <= 0.15);
    CHECK(errors.back() <= 0.30);
}

TEST_CASE("roofline --model --stack: each op's predicted time, LLaMA-3 8B's attention is the measured H100 kernel's") {
    // LLaMA-3 8B attention is the reference's shape: 32 query and 8 KV heads of 128, causal.
    for (const auto& [stack, family] : {std::pair{"pytorch-eager", "flash-attention-2"}, std::pair{"megatron-core", "cudnn"}}) {
        double measured_s = 0;
        for (const auto& a : measurements()["attention"])
            if (a["kernel"] == family && a["seq"] == 4096) measured_s = a["forward_s"];
        REQUIRE(measured_s > 0);
        const auto r = test::run_ridgeline(std::string("roofline --model llama3-8b --hardware h100 --phase prefill --seq-len 4096 --batch 4 --json --stack ") + stack);
        REQUIRE(r.exit_code == 0);
        const auto doc = nlohmann::json::parse(r.out);
        CHECK(doc["stack"] == stack);
        double layer_s = 0;
        for (const auto& op : doc["ops"]) {
            REQUIRE(op["predicted_s"].is_number());
            CHECK(op["predicted_s"].get<double>() >= 0.99 * op["time_s"].get<double>());  // never faster than the ideal roofline
            layer_s += op["predicted_s"].get<double>();
            if (op["name"] == "attention") CHECK(std::abs(op["predicted_s"].get<double>() / measured_s - 1.0) < 0.10);
        }
        CHECK(doc["layer"]["predicted_s"].get<double>() == doctest::Approx(layer_s));
    }
    // No kernel model: no predictions, and the report says why.
    const auto bare = test::run_ridgeline("roofline --model llama3-8b --hardware " + chip_without_kernels("tpu-v5e").string() +
                                          " --phase prefill --seq-len 4096 --json");
    REQUIRE(bare.exit_code == 0);
    const auto doc = nlohmann::json::parse(bare.out);
    CHECK(doc["layer"]["predicted_s"].is_null());
    CHECK(doc["predicted_note"].get<std::string>().find("no kernel model") != std::string::npos);
}

// Chips other than the H100 get their kernel models from cited benchmarks (scripts/derive_kernels.py,
// tests/data/reference/kernel-benchmarks-*.json); each must reproduce the benchmarks it was fitted to
// within the bounds the H100 meets against its own measurements.
TEST_CASE("kernel model: derived chips reproduce their cited GEMM and attention benchmarks") {
    const auto rate_error = [](double flops, double predicted_s, double measured_flops_per_s) {
        return std::abs(flops / predicted_s / measured_flops_per_s - 1.0);
    };
    const MatmulDtypes bf16{Dtype::bf16, Dtype::bf16, Dtype::bf16};
    // Blackwell: cuDNN and FlashAttention-2 by sequence (causal, head dim 128, bf16), both passes.
    const nlohmann::json blackwell = test::read_json(test::data_file("reference/kernel-benchmarks-blackwell.json"));
    for (const auto& [chip_name, label] : {std::pair{"b200", "B200"}, std::pair{"gb200", "GB200"}}) {
        const ChipSpec chip = resolve_hardware(chip_name, test::source_dir()).chip;
        std::vector<double> errors;
        for (const auto& a : blackwell["attention"]) {
            if (a["chip"] != label || a["dtype"] != "bf16" || a["causal"] != true || a["head_dim"] != 128) continue;
            const std::string kernel = a["kernel"];
            const std::string family = kernel.rfind("cuDNN", 0) == 0 ? "cudnn" : kernel.rfind("FlashAttention-2 2", 0) == 0 ? "flash-attention-2" : "";
            // Batch 1: below 1,024 tokens 128 heads do not fill the GPU, a regime no training or prefill step is in.
            if (family.empty() || a["seq"].get<double>() < 1024) continue;
            const auto pass = a["pass"] == "fwd" ? AttentionPassKind::forward : AttentionPassKind::backward;
            const double flops = 1e12;
            errors.push_back(rate_error(flops, attention_time(chip, family, pass, flops, 0, a["seq"]).lower_bound_s(), a["tflops"].get<double>() * 1e12));
        }
        check_errors(errors, (std::string(chip_name) + " attention").c_str());
        std::vector<double> gemm_errors;
        for (const auto& g : blackwell["gemm"]) {
            const bool mine = g["chip"] == label || (label == std::string("B200") && g["chip"].get<std::string>().rfind("SM100", 0) == 0);
            // MAMF's best shapes beat typical ones by design; the model predicts typical shapes.
            if (!mine || g["dtype"] != "bf16" || !g["M"].is_number() || !g["tflops"].is_number() ||
                g["kernel"].get<std::string>().find("MAMF") != std::string::npos)
                continue;
            const double m = g["M"], k = g["K"], n = g["N"];
            if (2 * m * k * n < 1e11) continue;  // smaller ones were timed with or without launches, unsaid
            gemm_errors.push_back(rate_error(2 * m * k * n, gemm_time(chip, {m, k, n, 1, k * n}, bf16).lower_bound_s(), g["tflops"].get<double>() * 1e12));
        }
        if (label == std::string("B200")) check_errors(gemm_errors, "b200 bf16 GEMMs");  // the GB200 has only a MAMF best shape
    }
    // A100: FlashAttention-2 paper Fig. 4, forward+backward (FLOPs 3.5 x forward), causal, head dim 128.
    const nlohmann::json a100 = test::read_json(test::data_file("reference/kernel-benchmarks-a100.json"));
    const ChipSpec a100_chip = resolve_hardware("a100-80gb", test::source_dir()).chip;
    for (const auto& [family, kernel] : {std::pair{"flash-attention-2", "flash-attention-2"}, std::pair{"unfused", "pytorch-standard"}}) {
        std::vector<double> errors;
        for (const auto& a : a100["attention"]) {
            if (a["kernel"] != kernel || a["causal"] != true || a["head_dim"] != 128) continue;
            const double fwd = 1e12, seq = a["seq"];
            const double seconds = attention_time(a100_chip, family, AttentionPassKind::forward, fwd, 0, seq).lower_bound_s() +
                                   attention_time(a100_chip, family, AttentionPassKind::backward, 2.5 * fwd, 0, seq).lower_bound_s();
            errors.push_back(rate_error(3.5 * fwd, seconds, a["tflops"].get<double>() * 1e12));
        }
        check_errors(errors, (std::string("a100-80gb ") + family).c_str());
    }
    // TPUs: XLA matmuls (fractions of the chip's own peak) on a v5e, the one TPU with cited matmuls.
    const nlohmann::json tpu = test::read_json(test::data_file("reference/kernel-benchmarks-tpu.json"));
    for (const auto& [chip_name, label] : {std::pair{"tpu-v5e", "v5e"}}) {
        const ChipSpec chip = resolve_hardware(chip_name, test::source_dir()).chip;
        std::vector<double> errors;
        for (const auto& g : tpu["matmul"]) {
            if (g["chip"] != label || g["kernel"].get<std::string>().rfind("XLA", 0) != 0 || g["M"].get<double>() < 4096) continue;
            const double m = g["M"], k = g["K"], n = g["N"];
            const double measured = g["fraction_of_peak"].get<double>() * chip.peak_flops(Dtype::bf16);
            errors.push_back(rate_error(2 * m * k * n, gemm_time(chip, {m, k, n, 1, k * n}, bf16).lower_bound_s(), measured));
        }
        check_errors(errors, (std::string(chip_name) + " XLA matmuls").c_str());
    }
}

// OpenXLA's own table of measured GEMM rates (sm_90: the H100, sm_100: Blackwell), which no kernel block was
// fitted to: the bf16 models of the H100 (measured here) and the B200 (derived from cited benchmarks) must
// reproduce it as they do their own data. Batched entries are b GEMMs of [m, k] x [k, n], each with its weights.
TEST_CASE("kernel model: the H100's and B200's bf16 GEMMs reproduce OpenXLA's measured GEMM table") {
    const nlohmann::json table = test::read_json(test::data_file("reference/xla-gemm-table.json"));
    const MatmulDtypes bf16{Dtype::bf16, Dtype::bf16, Dtype::bf16};
    for (const auto& [section, chip_name] : {std::pair{"sm_90", "h100-sxm"}, std::pair{"sm_100", "b200"}}) {
        const ChipSpec chip = resolve_hardware(chip_name, test::source_dir()).chip;
        std::vector<double> errors;
        for (const auto& e : table["sections"][section]) {
            const double b = e["b"], m = e["m"], n = e["n"], k = e["k"];
            const double flops = 2 * b * m * n * k;
            if (flops < 1e11) continue;  // as for the cited benchmarks: a fixed cost of unsaid size would dominate
            const double predicted_s = gemm_time(chip, {m, k, n, b, b * k * n}, bf16).lower_bound_s();
            errors.push_back(std::abs(flops / predicted_s / e["flops"]["bf16xbf16->bf16"].get<double>() - 1.0));
        }
        check_errors(errors, (std::string(chip_name) + " bf16 GEMMs vs OpenXLA's table").c_str());
    }
}

TEST_CASE("scripts/derive_kernels.py: the chip files hold what the script derives from the cited benchmarks") {
    // The script prices GEMMs with this build's binary.
    const std::string command = "RIDGELINE_BINARY=" + std::string(RIDGELINE_BINARY) + " python3 " +
                                (test::source_dir() / "scripts" / "derive_kernels.py").string() + " --check > /dev/null";
    CHECK(std::system(command.c_str()) == 0);
}

TEST_CASE("a chip file whose kernel model lacks the dtype a command needs is refused naming the file, field and dtype") {
    nlohmann::json chip = test::read_json(test::source_dir() / "hardware" / "chips" / "h100-sxm.json");
    chip["kernels"]["gemm"]["dtypes"].erase("fp8");
    const auto path = test::scratch_dir("kernels") / "h100-no-fp8.json";
    std::ofstream(path) << chip.dump(2);
    const auto bf16 = test::run_ridgeline("train --model llama3-8b --hardware " + path.string() + " --chips 8 --tp 8");
    CHECK(bf16.exit_code == 0);
    const auto fp8 = test::run_ridgeline("train --model llama3-8b --hardware " + path.string() + " --chips 8 --tp 8 --precision fp8");
    CHECK(fp8.exit_code == 2);
    CHECK(fp8.err.find("h100-no-fp8.json") != std::string::npos);
    CHECK(fp8.err.find("kernels.gemm.dtypes.fp8") != std::string::npos);
    CHECK(fp8.out.empty());
}

TEST_CASE("backward fp8 GEMMs pay the chip's split-accumulation slowdown over the measured fast-accumulating ones") {
    const ChipSpec h100 = resolve_hardware("h100-sxm", test::source_dir()).chip;
    // The cited figure, read from the chip file itself (pytorch/ao #2377: 1.1x to 1.2x).
    const double slowdown =
        test::read_json(test::source_dir() / "hardware" / "chips" / "h100-sxm.json")["kernels"]["fp8_split_accumulation"]["slowdown"]["value"];
    CHECK(slowdown >= 1.1);
    CHECK(slowdown <= 1.2);
    const Gemm g{4096, 8192, 8192, 1, 8192.0 * 8192};
    // The backward pass: dX = dY W^T (rows x cols -> contract) and dW = X^T dY (contract x rows -> cols).
    const auto both = [&](const MatmulDtypes& t) {
        return gemm_time(h100, {g.rows, g.cols, g.contract, 1, g.weight_elements}, t).lower_bound_s() +
               gemm_time(h100, {g.contract, g.rows, g.cols, 1, 0.0}, t).lower_bound_s();
    };
    const MatmulDtypes fp8{Dtype::bf16, Dtype::bf16, Dtype::fp8}, bf16{Dtype::bf16, Dtype::bf16, Dtype::bf16};
    CHECK(gemm_backward_s(h100, g, fp8) == doctest::Approx(slowdown * both(fp8)));
    CHECK(gemm_backward_s(h100, g, bf16) == doctest::Approx(both(bf16)));
    // Blackwell's block-scaled fp8 has no fast-accumulation mode: nothing to pay.
    const ChipSpec b200 = resolve_hardware("b200", test::source_dir()).chip;
    CHECK(b200.kernels->fp8_split_accumulation_slowdown == 1.0);

    // A slowdown below 1 would make the slow mode the fast one: refused naming the file and field.
    nlohmann::json chip = test::read_json(test::source_dir() / "hardware" / "chips" / "h100-sxm.json");
    chip["kernels"]["fp8_split_accumulation"]["slowdown"]["value"] = 0.9;
    const auto path = test::scratch_dir("kernels") / "h100-fast-split.json";
    std::ofstream(path) << chip.dump(2);
    const auto run = test::run_ridgeline("train --model llama3-8b --hardware " + path.string() + " --chips 8 --tp 8 --precision fp8");
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("h100-fast-split.json") != std::string::npos);
    CHECK(run.err.find("kernels.fp8_split_accumulation.slowdown") != std::string::npos);
}
