// The command line as users meet it: every subcommand's faces, and every kind of bad input
// refused with one line naming the file (or flag) and field, exit code 2.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using nlohmann::json;
using ridgeline::test::read_json;
using ridgeline::test::expect_refusal;
using ridgeline::test::run_ridgeline;

namespace {

std::filesystem::path scratch_dir() { return ridgeline::test::scratch_dir("cli"); }

std::string write_file(const std::string& name, const std::string& text) {
    const auto path = scratch_dir() / name;
    std::ofstream(path) << text;
    return path.string();
}

json shipped_model() { return read_json(ridgeline::test::source_dir() / "models" / "llama3-8b.json"); }
json shipped_chip() { return read_json(ridgeline::test::source_dir() / "hardware" / "chips" / "h100-sxm.json"); }

// Runs and expects a refusal: exit 2, nothing on stdout, one line on stderr naming each of `needles`.
void expect_model_refusal(const std::string& file_name, const json& model, const std::string& field) {
    const std::string path = write_file(file_name, model.dump());
    expect_refusal("model " + path, {path, field});
}

}  // namespace

TEST_CASE("every subcommand answers --help with exit 0") {
    for (const char* command : {"--help", "train --help", "validate --help", "model --help", "roofline --help", "topology --help",
                                "collective --help", "hardware --help", "models --help", "serve --help", "search serve --help"}) {
        CAPTURE(command);
        const auto result = run_ridgeline(command);
        CHECK(result.exit_code == 0);
        CHECK(result.out.find("Usage") != std::string::npos);
    }
}

// Issue 18's fast start: 20 MB resident. Linking cuBLASLt alone cost every command ~210 MB; the
// cuda backend now opens it when it starts.
TEST_CASE("the commands people run most start small: no GPU library is loaded before calibrate needs it") {
#ifdef RIDGELINE_SANITIZED
    constexpr double kMaxResidentBytes = 200e6;  // shadow memory
#else
    constexpr double kMaxResidentBytes = 20e6;
#endif
    for (const std::string arguments : {"--help", "models", "hardware", "model llama3-70b", "train --help", "serve --help",
                                        "search train --help", "calibrate --help"}) {
        CAPTURE(arguments);
        const auto result = run_ridgeline(arguments);
        CHECK(result.exit_code == 0);
        CHECK(result.max_rss_bytes > 0);
        CHECK(result.max_rss_bytes < kMaxResidentBytes);
    }
}

TEST_CASE("files name their format under \"schema\"; the older \"format\" is read with one warning, both at once refused") {
    json old = shipped_model();
    old["format"] = old["schema"];
    old.erase("schema");
    const std::string path = write_file("old-key-model.json", old.dump());
    const auto result = run_ridgeline("model " + path);
    CHECK(result.exit_code == 0);
    CHECK(result.err == "warning: " + path + ": names its format under \"format\"; rename the key to \"schema\"\n");
    CHECK(run_ridgeline("model " + write_file("new-key-model.json", shipped_model().dump())).err.empty());
    json both = shipped_model();
    both["format"] = both["schema"];
    expect_refusal("model " + write_file("both-keys-model.json", both.dump()), {"both-keys-model.json", "format", "once"});
}

// Issue 18: a deployment that does not fit has no cost and no disaggregated split; a chip with no
// price says how to give one; a chip with no kernel data is a datasheet, never priced at the ideal.
TEST_CASE("what cannot be priced is not: no fit, no price, no kernel data") {
    const std::string too_small = "serve --model llama3-70b --hardware tpu-v5e --chips 16 --tp 8 --batch 64 --input-len 2048 "
                                  "--output-len 256 --requests-per-s 10";
    const auto table = run_ridgeline(too_small);
    REQUIRE(table.exit_code == 0);
    CHECK(table.out.find("does NOT fit") != std::string::npos);
    CHECK(table.out.find("none: the deployment does not fit") != std::string::npos);
    CHECK(table.out.find("No disaggregated split at 10.00 requests/s: the deployment does not fit") != std::string::npos);
    const json doc = json::parse(run_ridgeline(too_small + " --json").out);
    CHECK(doc["fits"] == false);
    CHECK(doc["cost_per_million_output_tokens_usd"].is_null());
    CHECK(doc.find("disaggregation") == doc.end());

    json unpriced = shipped_chip();
    unpriced.erase("price_usd_per_chip_hour");
    const std::string unpriced_path = write_file("no-price-h100.json", unpriced.dump());
    const auto train = run_ridgeline("train --model llama3-8b --hardware " + unpriced_path + " --chips 8 --train-tokens 1e11");
    REQUIRE(train.exit_code == 0);
    CHECK(train.out.find("none: no price for h100-sxm (give --price USD per chip-hour)") != std::string::npos);
    const auto priced = run_ridgeline("train --model llama3-8b --hardware " + unpriced_path + " --chips 8 --train-tokens 1e11 --price 2");
    CHECK(priced.out.find("cost at list price") != std::string::npos);
    CHECK(priced.out.find("none: no price") == std::string::npos);

    json datasheet = shipped_chip();
    datasheet.erase("kernels");
    datasheet.erase("efficiency");
    const std::string datasheet_path = write_file("datasheet-h100.json", datasheet.dump());
    expect_refusal("train --model llama3-8b --hardware " + datasheet_path + " --chips 8", {"h100-sxm", "kernels", "ridgeline fit"});
    expect_refusal("serve --model llama3-8b --hardware " + datasheet_path + " --batch 8 --input-len 128 --output-len 128",
                   {"h100-sxm", "kernels"});
    expect_refusal("search train --model llama3-8b --hardware " + datasheet_path + " --chips 8", {"h100-sxm", "kernels"});
    CHECK(run_ridgeline("roofline --hardware " + datasheet_path).exit_code == 0);  // a datasheet still has ridge points
    json fitted_on_runs = shipped_chip();
    fitted_on_runs.erase("kernels");
    CHECK(run_ridgeline("train --model llama3-8b --hardware " + write_file("efficiency-h100.json", fitted_on_runs.dump()) + " --chips 8")
              .exit_code == 0);
}

TEST_CASE("on/off knobs are spelled the same in train and search train: alone or on, off") {
    const std::string train = "train --model llama3-70b --hardware dgx-h100 --chips 64 --tp 8 --global-batch-seqs 64 --json";
    const auto step = [&](const std::string& extra) {
        const auto result = run_ridgeline(train + " " + extra);
        REQUIRE(result.exit_code == 0);
        return json::parse(result.out)["step_time_s"].get<double>();
    };
    CHECK(step("--sp") == step("--sp on"));
    CHECK(step("--sp off") == step(""));
    CHECK(step("--sp") != step("--sp off"));
    CHECK(step("--overlap off") == step("--no-overlap"));
    CHECK(step("--overlap off") != step("--overlap on"));
    const std::string search = "search train --model llama3-8b --hardware dgx-h100 --chips 8 --global-batch-seqs 8 --tp 8 --json";
    const auto best_sp = [&](const std::string& extra) {
        const auto result = run_ridgeline(search + " " + extra);
        REQUIRE(result.exit_code == 0);
        return json::parse(result.out)["top"][0]["plan"]["sequence_parallel"].get<bool>();
    };
    CHECK(best_sp("--sp") == true);
    CHECK(best_sp("--sp off") == false);
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 8 --sp maybe", {"--sp", "on or off"});
    expect_refusal(search + " --overlap sometimes", {"--overlap", "on or off"});
}

TEST_CASE("--progress goes to stderr only: the report on stdout is the same with it") {
    const std::string dev = (ridgeline::test::data_file("runs") / "published-runs-dev.json").string();
    const auto plain = run_ridgeline("validate " + dev + " --json");
    const auto shown = run_ridgeline("validate " + dev + " --json --progress");
    REQUIRE(plain.exit_code == 0);
    REQUIRE(shown.exit_code == 0);
    CHECK(json::parse(shown.out) == json::parse(plain.out));
    CHECK(plain.err.empty());  // stderr is not a terminal here, and --progress was not given
    CHECK(shown.err.find("error") == std::string::npos);
    const std::string search = "search train --model llama3-8b --hardware dgx-h100 --chips 64 --global-batch-seqs 256 --json";
    CHECK(json::parse(run_ridgeline(search + " --progress").out)["top"] == json::parse(run_ridgeline(search).out)["top"]);
}

TEST_CASE("--json prints one document that names its schema and version") {
    const std::vector<std::pair<std::string, std::string>> commands = {
        {"model llama3-70b --seq-len 4096 --json", "ridgeline.model/1"},
        {"roofline --hardware tpu-v5p --json", "ridgeline.roofline/1"},
        {"roofline --hardware h100 --matmul 64,4096,8192 --json", "ridgeline.roofline-matmul/1"},
        {"roofline --hardware dgx-h100 --model deepseek-v3 --phase decode --batch 32 --json", "ridgeline.roofline-layer/1"},
        {"hardware --json", "ridgeline.hardware-list/1"},
        {"models --json", "ridgeline.model-list/1"},
    };
    for (const auto& [command, schema] : commands) {
        CAPTURE(command);
        const auto result = run_ridgeline(command);
        REQUIRE(result.exit_code == 0);
        const json doc = json::parse(result.out);
        CHECK(doc.at("schema") == schema);
    }
}

TEST_CASE("model --json carries the numbers a script needs, KV cache for each dtype") {
    const auto result = run_ridgeline("model llama3-70b --seq-len 8192 --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    // 2 (K and V) * 80 layers * 8 KV heads * 128 head_dim * 2 bytes
    CHECK(doc["kv_cache_bytes_per_token"]["bf16"].get<double>() == 2.0 * 80 * 8 * 128 * 2);
    CHECK(doc["kv_cache_bytes_per_token"]["int8"].get<double>() == 2.0 * 80 * 8 * 128);
    CHECK(doc["kv_cache_bytes_per_sequence"]["bf16"].get<double>() == 2.0 * 80 * 8 * 128 * 2 * 8192);
    CHECK(doc["params"]["total"].get<double>() == doctest::Approx(70.55e9).scale(0).epsilon(0.001));
    CHECK(doc["flops_per_token"]["six_n_flops"].get<double>() == doctest::Approx(6 * 70.55e9).scale(0).epsilon(0.001));
    for (const char* mode : {"none", "selective", "full"})
        CHECK(doc["activation_bytes_per_token_per_layer"][mode].get<double>() > 0);
}

TEST_CASE("roofline --matmul reports bytes, FLOPs and the winning bound") {
    // gpu-04 of the scaling book: fp16[64,4096] x fp16[4096,8192] on B200 is bandwidth-bound.
    const auto result = run_ridgeline("roofline --hardware b200 --matmul 64,4096,8192 --dtype fp16 --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    CHECK(doc["flops"].get<double>() == 2.0 * 64 * 4096 * 8192);
    CHECK(doc["bytes"].get<double>() == 2.0 * (64 * 4096 + 4096 * 8192 + 64 * 8192));
    CHECK(doc["bound"] == "memory");
    const auto int8 = run_ridgeline("roofline --hardware tpu-v5e --matmul 64,4096,8192 --weights-dtype int8 --json");
    REQUIRE(int8.exit_code == 0);
    CHECK(json::parse(int8.out)["bytes"].get<double>() == 2.0 * 64 * 4096 + 4096.0 * 8192 + 2.0 * 64 * 8192);
}

TEST_CASE("bad model files are refused naming the file and field") {
    expect_refusal("model " + write_file("broken.json", "{\"schema\": \"ridgeline.model-spec/1\", "), {"broken.json", "malformed JSON"});

    json zero = shipped_model();
    zero["n_layers"] = 0;
    expect_model_refusal("zero.json", zero, "n_layers");

    json negative = shipped_model();
    negative["d_model"] = -4096;
    expect_model_refusal("negative.json", negative, "d_model");

    json fractional = shipped_model();
    fractional["n_heads"] = 31.5;
    expect_model_refusal("fractional.json", fractional, "n_heads");

    json text = shipped_model();
    text["d_ff"] = "14336";
    expect_model_refusal("text.json", text, "d_ff");

    json missing = shipped_model();
    missing.erase("vocab_size");
    expect_model_refusal("missing.json", missing, "vocab_size");

    json typo = shipped_model();
    typo["d_modle"] = 4096;
    expect_model_refusal("typo.json", typo, "d_modle");

    json heads = shipped_model();
    heads.erase("head_dim");
    heads["n_heads"] = 30;  // 4096 / 30 is not whole
    heads["n_kv_heads"] = 10;
    expect_model_refusal("heads.json", heads, "n_heads");

    json kv = shipped_model();
    kv["n_kv_heads"] = 5;  // does not divide 32
    expect_model_refusal("kv.json", kv, "n_kv_heads");

    json huge = shipped_model();
    huge["n_layers"] = 1e300;
    expect_model_refusal("huge.json", huge, "n_layers");
}

TEST_CASE("Hugging Face configs: unsupported architectures and broken fields are refused") {
    const auto fixture = ridgeline::test::data_file("hf/unsupported-config.json").string();
    expect_refusal("model " + fixture, {fixture, "model_type", "falcon_mamba"});

    json llama = read_json(ridgeline::test::data_file("hf/llama-config.json"));
    llama["num_key_value_heads"] = 7;
    const std::string kv = write_file("hf-kv.json", llama.dump());
    expect_refusal("model " + kv, {kv, "num_key_value_heads"});

    json no_type = read_json(ridgeline::test::data_file("hf/llama-config.json"));
    no_type.erase("model_type");
    const std::string untyped = write_file("hf-untyped.json", no_type.dump());
    expect_refusal("model " + untyped, {untyped, "model_type"});
}

TEST_CASE("bad hardware files are refused naming the file and field") {
    json zero = shipped_chip();
    zero["hbm_bw_Bps"]["value"] = 0;
    const std::string zero_path = write_file("zero-chip.json", zero.dump());
    expect_refusal("roofline --hardware " + zero_path, {zero_path, "hbm_bw_Bps.value"});

    json typo = shipped_chip();
    typo["interconnect"]["nvlink"]["bw_per_chip_Bps"] = typo["interconnect"]["nvlink"]["bw_per_chip_Bps_one_way"];
    const std::string typo_path = write_file("typo-chip.json", typo.dump());
    expect_refusal("roofline --hardware " + typo_path, {typo_path, "interconnect.nvlink.bw_per_chip_Bps"});

    json missing = shipped_chip();
    missing.erase("hbm_bytes");
    const std::string missing_path = write_file("missing-chip.json", missing.dump());
    expect_refusal("roofline --hardware " + missing_path, {missing_path, "hbm_bytes"});

    json unsourced = shipped_chip();
    unsourced["hbm_bytes"]["source"] = "";
    const std::string unsourced_path = write_file("unsourced-chip.json", unsourced.dump());
    expect_refusal("roofline --hardware " + unsourced_path, {unsourced_path, "hbm_bytes.source"});

    // Calibrated descriptions' fields: a collective above the link's streaming rate, an output
    // written less than once, an unknown collective kind.
    json fast = shipped_chip();
    fast["efficiency"]["collective_kinds"] = {{"allreduce", {{"streaming", 1.5}, {"cached", 2.0}}}};
    const std::string fast_path = write_file("fast-collective-chip.json", fast.dump());
    expect_refusal("roofline --hardware " + fast_path, {fast_path, "efficiency.collective_kinds.allreduce.streaming"});

    json passes = shipped_chip();
    passes["efficiency"]["matmul_output_passes"] = 0.5;
    const std::string passes_path = write_file("passes-chip.json", passes.dump());
    expect_refusal("roofline --hardware " + passes_path, {passes_path, "efficiency.matmul_output_passes"});

    json kind = shipped_chip();
    kind["efficiency"]["collective_kinds"] = {{"allsum", {{"streaming", 0.5}}}};
    const std::string kind_path = write_file("kind-chip.json", kind.dump());
    expect_refusal("roofline --hardware " + kind_path, {kind_path, "efficiency.collective_kinds.allsum"});
}

TEST_CASE("unknown names and bad flags are refused") {
    expect_refusal("model llama9-1t", {"--model", "llama9-1t", "llama3-70b", "deepseek-v3"});
    expect_refusal("roofline --hardware tpu-v99", {"--hardware", "tpu-v99", "dgx-h100"});
    expect_refusal("roofline --hardware h100 --matmul 64,0,8192", {"--matmul"});
    expect_refusal("roofline --hardware h100 --matmul 64,4096", {"--matmul"});
    expect_refusal("roofline --hardware h100 --matmul 64,4096,x", {"--matmul"});
    expect_refusal("roofline --hardware h100 --matmul 64,4096,8192 --dtype fp12", {"--dtype", "fp12"});
    expect_refusal("roofline --hardware a100 --matmul 64,4096,8192 --dtype fp8", {"--dtype", "fp8"});
    expect_refusal("model llama3-8b --seq-len -5", {"--seq-len"});
    expect_refusal("roofline --hardware h100 --model llama3-8b --phase sampling", {"--phase"});
    expect_refusal("roofline --hardware h100 --model llama3-8b --batch 0", {"--batch"});
    expect_refusal("roofline --hardware h100 --model llama3-8b --matmul 1,2,3", {"--model", "--matmul"});
    expect_refusal("model llama3-8b --seq-len abc", {"--seq-len"});
    expect_refusal("frobnicate", {"frobnicate"});
}

TEST_CASE("collective and topology commands: --json faces and custom topologies") {
    const auto result = run_ridgeline("collective --hardware tpu-v5p --topology 4x4x4 --op allgather --bytes 1GiB --axes x,y --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    CHECK(doc["schema"] == "ridgeline.collective/1");
    CHECK(doc["group_size"] == 16);
    // Two wrapped axes of 4 at 9e10 B/s per link and direction: V / (2 axes x 2 directions x 9e10).
    CHECK(doc["bandwidth_s"].get<double>() == doctest::Approx(1073741824.0 / (2 * 2 * 9e10)));
    CHECK(doc["bound"] == "bandwidth");

    const auto gpu = run_ridgeline("collective --hardware dgx-h100 --nodes 32 --mesh data=32,tensor=8 --op allreduce --bytes 64MB --axes tensor --json");
    REQUIRE(gpu.exit_code == 0);
    const json gpu_doc = json::parse(gpu.out);
    CHECK(gpu_doc["group_size"] == 8);
    CHECK(gpu_doc["bottleneck"] == "nvlink");  // tensor was placed inside the node
    CHECK(gpu_doc["bandwidth_s"].get<double>() == doctest::Approx(2 * 64e6 * 7 / 8 / 4.5e11));
    // At the share NCCL's maintainers measure on NVLink 4 (370 of 450 GB/s, nccl-tests issue #212), as train prices it.
    const auto measured = run_ridgeline("collective --hardware dgx-h100 --nodes 32 --mesh data=32,tensor=8 --op allreduce --bytes 64MB --axes tensor --links measured --json");
    REQUIRE(measured.exit_code == 0);
    CHECK(json::parse(measured.out)["bandwidth_s"].get<double>() == doctest::Approx(2 * 64e6 * 7 / 8 / 3.7e11).scale(0).epsilon(0.002));
    CHECK(run_ridgeline("collective --hardware dgx-h100 --op allreduce --bytes 64MB --links fast").exit_code == 2);

    for (const char* file : {"nvl72-torus-4x4.json", "dgx-h100-fat-tree-2to1.json", "hypercube-16.json"}) {
        CAPTURE(file);
        const std::string path = (ridgeline::test::source_dir() / "hardware" / "topologies" / file).string();
        const auto topology = run_ridgeline("topology --topology " + path + " --json");
        REQUIRE(topology.exit_code == 0);
        CHECK(json::parse(topology.out)["connected"] == true);
        const auto collective = run_ridgeline("collective --topology " + path + " --op alltoall --bytes 1GB --json");
        REQUIRE(collective.exit_code == 0);
        CHECK(json::parse(collective.out)["time_s"].get<double>() > 0);
    }
    // The 2:1 fat tree: an AllGather across all 64 nodes pays the oversubscription at the spine.
    const std::string fat_tree = (ridgeline::test::source_dir() / "hardware" / "topologies" / "dgx-h100-fat-tree-2to1.json").string();
    const json across = json::parse(run_ridgeline("collective --topology " + fat_tree + " --op allgather --bytes 8GB --axes ib --json").out);
    CHECK(across["bottleneck"].get<std::string>().find("spine") != std::string::npos);
    // 8 GB gathered over 64 nodes, one chip each: (4 leaves - 1) / 4 of it crosses the spine at 5e10 / 2.
    CHECK(across["bandwidth_s"].get<double>() == doctest::Approx(8e9 * 0.75 * 2 / 5e10));
}

TEST_CASE("bad topologies, meshes and collective flags are refused naming the field") {
    const auto source = ridgeline::test::source_dir();
    const json nvl72 = read_json(source / "hardware" / "topologies" / "nvl72-torus-4x4.json");

    json zero_bw = nvl72;
    zero_bw["levels"][1]["link_bw_Bps_one_way"]["value"] = 0;
    const std::string zero_path = write_file("zero-bw-topology.json", zero_bw.dump());
    expect_refusal("topology --topology " + zero_path, {zero_path, "levels[1].link_bw_Bps_one_way.value"});

    json negative_latency = nvl72;
    negative_latency["levels"][0]["hop_latency_s"]["value"] = -1e-6;
    const std::string latency_path = write_file("negative-latency-topology.json", negative_latency.dump());
    expect_refusal("topology --topology " + latency_path, {latency_path, "levels[0].hop_latency_s.value"});

    json disconnected = read_json(source / "hardware" / "topologies" / "hypercube-16.json");
    disconnected["levels"][0]["links"] = json::array({json::array({0, 1}), json::array({2, 3})});
    const std::string disconnected_path = write_file("disconnected-topology.json", disconnected.dump());
    expect_refusal("topology --topology " + disconnected_path, {disconnected_path, "levels[0].links", "disconnected"});

    json bad_wraps = nvl72;
    bad_wraps["levels"][1]["wraps"] = json::array({true});
    const std::string wraps_path = write_file("wraps-topology.json", bad_wraps.dump());
    expect_refusal("topology --topology " + wraps_path, {wraps_path, "levels[1].wraps"});

    expect_refusal("topology --hardware tpu-v5p --topology 4x4x4 --chips 100", {"--chips"});
    expect_refusal("topology --hardware tpu-v5p --topology 4x4x0", {"--topology"});
    expect_refusal("topology --hardware tpu-v5p --topology 32x32x32", {"--topology"});
    expect_refusal("topology --hardware dgx-h100 --chips 12", {"--chips"});
    expect_refusal("collective --hardware dgx-h100 --nodes 4 --mesh data=4,tensor=4 --op allgather --bytes 1GB", {"--mesh"});
    expect_refusal("collective --hardware dgx-h100 --nodes 4 --mesh data=3,tensor=8 --op allgather --bytes 1GB", {"--mesh"});
    expect_refusal("collective --hardware dgx-h100 --nodes 4 --mesh data=4,tensor=8 --op allgather --bytes 1GB --axes expert",
                   {"--axes", "expert"});
    expect_refusal("collective --hardware dgx-h100 --nodes 4 --op scatter --bytes 1GB", {"--op", "scatter"});
    expect_refusal("collective --hardware dgx-h100 --nodes 4 --op allgather --bytes -1GB", {"--bytes"});
    expect_refusal("collective --hardware dgx-h100 --nodes 4 --op allgather --bytes 1XB", {"--bytes"});
}

TEST_CASE("train --json names its schema and carries the fields scripts need") {
    const auto result = run_ridgeline(
        "train --model llama3-70b --hardware dgx-h100 --chips 64 --global-batch-tokens 4194304 --tp 8 --pp 2 --sp --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    CHECK(doc["schema"] == "ridgeline.train/1");
    for (const char* key : {"step_time_s", "tokens_per_s", "mfu", "hfu", "memory_per_chip_bytes", "fits", "bound", "breakdown"})
        CHECK(doc.contains(key));
    CHECK(doc["tokens_per_s"].get<double>() * doc["step_time_s"].get<double>() == doctest::Approx(4194304.0));
    CHECK(doc["mfu"].get<double>() > 0.0);
    CHECK(doc["mfu"].get<double>() < 1.0);
}

TEST_CASE("train and search train assume no model or hardware: each missing one is named") {
    expect_refusal("train --chips 8", {"--model", "required"});
    expect_refusal("train --model llama3-8b --chips 8", {"--hardware", "required"});
    expect_refusal("search train --model llama3-8b --chips 8", {"--hardware", "required"});
    expect_refusal("search train --hardware h100 --chips 8", {"--model"});
}

TEST_CASE("train refuses plans that do not fit the chips or the model") {
    expect_refusal("train --model llama3-8b --hardware h100 --chips 8 --dp 3", {"dp"});
    // Qwen2-7B: 28 query heads and 4 KV heads; 14 neither divides nor is a multiple of 4.
    expect_refusal("train --model " + ridgeline::test::data_file("hf/qwen2-config.json").string() + " --hardware h100 --chips 14 --tp 14",
                   {"tp", "KV heads"});
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 24 --pp 5", {"tp x pp x cp"});
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 24 --pp 3", {"pipeline", "layers"});
    expect_refusal("train --model mixtral-8x7b --hardware dgx-h100 --chips 24 --ep 3", {"expert"});
    expect_refusal("train --model llama3-8b --hardware h100 --chips 8 --global-batch-seqs 12", {"global_batch"});
    expect_refusal("train --model llama3-8b --hardware a100 --chips 8 --precision fp8", {"precision", "fp8"});
    // Not fitting is an answer, not an error.
    const auto big = run_ridgeline("train --model llama3-405b --hardware h100 --chips 8 --zero 0 --json");
    REQUIRE(big.exit_code == 0);
    const json doc = json::parse(big.out);
    CHECK(doc["fits"] == false);
    CHECK(doc["overflow_bytes"].get<double>() > 0);
}

TEST_CASE("train: with no micro-batch given, a replica's whole batch where it fits, else the largest divisor of it that does") {
    const std::string job = "train --model llama3-8b --hardware dgx-h100 --chips 8 --global-batch-seqs 512 --recompute full --json";
    const json chosen = json::parse(run_ridgeline(job).out);
    // 512 sequences over 8 replicas: 64 each. Of its divisors, 2 fits and 4 does not, each given outright.
    CHECK(chosen["plan"]["micro_batch_seqs"] == 2);
    CHECK(chosen["plan"]["microbatches"] == 32);
    CHECK(chosen["fits"] == true);
    CHECK(chosen["plan"]["micro_batch_choice"].get<std::string>().find("largest that fits") != std::string::npos);
    const json two = json::parse(run_ridgeline(job + " --micro-batch 2").out), four = json::parse(run_ridgeline(job + " --micro-batch 4").out);
    CHECK(two["fits"] == true);
    CHECK(four["fits"] == false);
    CHECK(two["step_time_s"] == chosen["step_time_s"]);
    // Given, a micro-batch is kept even where it does not fit: not fitting is an answer.
    CHECK_FALSE(four["plan"].contains("micro_batch_choice"));
    // A whole batch that fits is kept, and nothing is said.
    const json small = json::parse(run_ridgeline("train --model llama3-8b --hardware dgx-h100 --chips 8 --global-batch-seqs 16 --recompute full --json").out);
    CHECK(small["plan"]["micro_batch_seqs"] == 2);
    CHECK(small["fits"] == true);
    CHECK_FALSE(small["plan"].contains("micro_batch_choice"));
    // Where not even one sequence fits, one at a time, and the report says none fits.
    const auto table = run_ridgeline("train --model llama3-8b --hardware dgx-h100 --chips 8 --global-batch-seqs 512");
    REQUIRE(table.exit_code == 0);
    CHECK(table.out.find("micro-batch 1 x 64 per replica (none of the replica's 64 sequences fits at once") != std::string::npos);
    CHECK(table.out.find("does NOT fit") != std::string::npos);
}

TEST_CASE("validate: per-record predictions, summaries, and skipped records with reasons") {
    const std::string runs = (ridgeline::test::source_dir() / "tests" / "data" / "runs" / "published-runs-dev.json").string();
    const auto result = run_ridgeline("validate " + runs + " --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    CHECK(doc["schema"] == "ridgeline.validation/1");
    int ok = 0, skipped = 0;
    for (const auto& record : doc["records"]) {
        if (record["status"] == "ok") {
            ++ok;
            CHECK(record["error"].get<double>() ==
                  doctest::Approx(record["predicted_tokens_per_s"].get<double>() / record["measured_tokens_per_s"].get<double>() - 1));
        } else {
            ++skipped;
            CHECK_FALSE(record["reason"].get<std::string>().empty());
        }
    }
    // Every record of the file is reported, predicted or skipped with its reason.
    const json file = ridgeline::test::read_json(runs);
    CHECK(ok + skipped == static_cast<int>(file.at("records").size()));
    CHECK(doc["summary"]["count"] == ok);
    CHECK(doc["summary"]["skipped"] == skipped);
    CHECK(ok >= 270);
    // Accuracy on the published runs, in sample: the kernel-model issue's goal was 7% / 20% (the accuracy
    // Ridgeline quotes is cross-validated: test_cross_validation.cpp). Since 2026-11-28 the p90 is 20.7%:
    // the per-step cost is no longer fitted (it raised the held-out error) and the NeMo 25.02/25.04 Blackwell
    // runs, held out or not, come out too fast; the cross-validated figures of the other records improved.
    CHECK(doc["summary"]["median_abs_error"].get<double>() <= 0.07);
    CHECK(doc["summary"]["p90_abs_error"].get<double>() <= 0.21);
    CHECK(doc["summary"]["by_source"].size() >= 8);

    // The MoE training records (issue "Modern models at full fidelity"): median <= 12%, p90 <= 25%, none skipped.
    std::set<std::string> moe_ids;
    const json records = read_json(runs);
    for (const auto& record : records["records"])
        if (record["kind"] == "train" && record["model"].contains("moe") && !record["model"]["moe"].is_null()) moe_ids.insert(record["id"]);
    std::vector<double> moe_errors;
    for (const auto& record : doc["records"])
        if (moe_ids.contains(record["id"].get<std::string>())) {
            CHECK(record["status"] == "ok");
            if (record["status"] == "ok") moe_errors.push_back(std::abs(record["error"].get<double>()));
        }
    REQUIRE(moe_errors.size() == moe_ids.size());
    REQUIRE(moe_errors.size() >= 20);
    std::sort(moe_errors.begin(), moe_errors.end());
    const std::size_t n = moe_errors.size();
    const double median = n % 2 ? moe_errors[n / 2] : (moe_errors[n / 2 - 1] + moe_errors[n / 2]) / 2;
    CHECK(median <= 0.12);
    CHECK(moe_errors[static_cast<std::size_t>(0.9 * static_cast<double>(n - 1))] <= 0.25);
}

TEST_CASE("validate --source predicts only the records of sources whose key contains the text, and none is exit 2") {
    const std::string runs = (ridgeline::test::source_dir() / "tests" / "data" / "runs" / "published-runs-dev.json").string();
    std::size_t in_file = 0;
    const json file = read_json(runs);
    for (const auto& record : file["records"])
        if (record["source"]["key"].get<std::string>().find("narayanan2021") != std::string::npos) ++in_file;
    REQUIRE(in_file > 0);
    const auto result = run_ridgeline("validate " + runs + " --source narayanan2021 --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    CHECK(doc["records"].size() == in_file);
    for (const auto& record : doc["records"]) CHECK(record["source"].get<std::string>().find("narayanan2021") != std::string::npos);
    expect_refusal("validate " + runs + " --source no-such-source", {"--source", "no-such-source"});
}

// A release whose overheads differ has its own stack, found as framework@version; any other
// version, or none, runs on the framework's stack.
TEST_CASE("validate runs a record on its framework's release stack where one is shipped, else on the framework's") {
    json file = read_json(ridgeline::test::source_dir() / "tests" / "data" / "runs" / "published-runs-dev.json");
    json record;
    for (const auto& r : file["records"])
        if (r["id"] == "mlm-h100-weak-32B") record = r;
    REQUIRE(record.is_object());
    const auto predicted = [&](const std::string& framework, const json& version) {
        json r = record;
        r["software"]["framework"] = framework;
        r["software"]["version"] = version;
        json doc = file;
        doc["records"] = json::array({r});
        const auto result = run_ridgeline("validate " + write_file("release-" + framework + ".json", doc.dump()) + " --json");
        REQUIRE(result.exit_code == 0);
        return json::parse(result.out)["records"][0]["predicted_tokens_per_s"].get<double>();
    };
    const double release = predicted("megatron-core", "r0.8.0"), by_name = predicted("megatron-core-0.8", nullptr);
    const double current = predicted("megatron-core", nullptr), other_version = predicted("megatron-core", "r0.14.0");
    CHECK(release == doctest::Approx(by_name).scale(0).epsilon(1e-12));
    CHECK(other_version == doctest::Approx(current).scale(0).epsilon(1e-12));
    CHECK(std::abs(release / current - 1.0) > 0.01);  // the two stacks' fitted overheads differ
}

TEST_CASE("validate refuses malformed run-record files naming the record and field") {
    const std::string runs = (ridgeline::test::source_dir() / "tests" / "data" / "runs" / "published-runs-dev.json").string();
    json file = read_json(runs);
    json one = file;
    one["records"] = json::array({file["records"][0]});
    one["records"][0]["plan"]["tp"] = 3;  // the plan no longer multiplies to the device count
    const std::string bad_plan = write_file("bad-plan-runs.json", one.dump());
    expect_refusal("validate " + bad_plan, {bad_plan, "mlm-h100-weak-1.7B", "plan.dp"});
    json missing = file;
    missing["records"] = json::array({file["records"][0]});
    missing["records"][0]["model"].erase("vocab");
    const std::string missing_path = write_file("missing-runs.json", missing.dump());
    expect_refusal("validate " + missing_path, {missing_path, "model.vocab"});
    json schema = file;
    schema["schema"] = "ridgeline.run-record/2";
    const std::string schema_path = write_file("schema-runs.json", schema.dump());
    expect_refusal("validate " + schema_path, {schema_path, "schema"});
}

TEST_CASE("train --scenario: a job file gives the same answer as the same flags, and flags override it") {
    const std::string file = (ridgeline::test::source_dir() / "scenarios" / "llama3-70b-tpu-v5p-512.json").string();
    const json from_file = json::parse(run_ridgeline("train --scenario " + file + " --json").out);
    const json from_flags = json::parse(run_ridgeline("train --model llama3-70b --hardware tpu-v5p --chips 512 --seq-len 8192 "
                                                      "--global-batch-tokens 4194304 --fsdp 64 --tp 8 --recompute full "
                                                      "--train-tokens 1.5e13 --json").out);
    CHECK(from_file["step_time_s"].get<double>() == doctest::Approx(from_flags["step_time_s"].get<double>()));
    CHECK(from_file["time_to_train_s"].get<double>() == doctest::Approx(from_flags["time_to_train_s"].get<double>()));
    const json overridden = json::parse(run_ridgeline("train --scenario " + file + " --tp 4 --fsdp 128 --json").out);
    CHECK(overridden["plan"]["axes"]["tensor"] == 4);
    CHECK(overridden["plan"]["axes"]["fsdp"] == 128);

    expect_refusal("train --scenario " + file + " --fsdp 1 --reshard-after-forward off", {"reshard_after_forward", "fsdp"});

    json uneven = read_json(ridgeline::test::source_dir() / "scenarios" / "llama3-405b-h100-16k.json");
    uneven["plan"]["stage_layers"][0] = 9;  // 7 -> 9: now 128 layers
    const std::string uneven_path = write_file("uneven-scenario.json", uneven.dump());
    expect_refusal("train --scenario " + uneven_path, {"stage_layers", "128"});
    json typo = read_json(file);
    typo["plan"]["tensr"] = 8;
    const std::string typo_path = write_file("typo-scenario.json", typo.dump());
    expect_refusal("train --scenario " + typo_path, {typo_path, "plan.tensr"});
    expect_refusal("train --model llama3-8b", {"--chips"});
}

TEST_CASE("large inputs stay bounded: the most layers taken, a million chips, an oversized file") {
    // 20,000 layers (model/plausible_sizes.hpp's limit, ~160x LLaMA 3 405B's) run; a million are refused.
    json deep = shipped_model();
    deep["n_layers"] = 20000;
    const std::string deep_path = write_file("deep-model.json", deep.dump());
    const auto model = run_ridgeline("model " + deep_path + " --json");
    REQUIRE(model.exit_code == 0);
    CHECK(json::parse(model.out)["params"]["total"].get<double>() > 1e12);
    deep["n_layers"] = 1000000;
    const std::string deeper_path = write_file("deeper-model.json", deep.dump());
    expect_refusal("model " + deeper_path, {deeper_path, "n_layers", "implausible"});

    const auto train = run_ridgeline("train --model llama3-8b --hardware dgx-h100 --chips 1000000 --seq-len 4096 --json");
    REQUIRE(train.exit_code == 0);
    CHECK(std::isfinite(json::parse(train.out)["step_time_s"].get<double>()));
    const auto topology = run_ridgeline("topology --hardware dgx-h100 --chips 1000000 --json");
    REQUIRE(topology.exit_code == 0);
    CHECK(json::parse(topology.out)["graph_built"] == false);

    const std::string huge = (scratch_dir() / "huge.json").string();
    {
        std::ofstream out(huge);
        out << "[";
        const std::string chunk(1 << 20, ' ');
        for (int i = 0; i < 65; ++i) out << chunk;
        out << "]";
    }
    expect_refusal("model " + huge, {huge, "64 MiB"});
    std::filesystem::remove(huge);
}

TEST_CASE("train runs on a custom topology file, and its chip count must agree") {
    const std::string torus = (ridgeline::test::source_dir() / "hardware" / "topologies" / "nvl72-torus-4x4.json").string();
    const auto result = run_ridgeline("train --model llama3-70b --topology " + torus + " --tp 8 --seq-len 8192 --global-batch-seqs 1152 --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    CHECK(doc["cluster"] == "nvl72-torus-4x4");
    CHECK(doc["chips"] == 72 * 16);
    CHECK(doc["chip"] == "gb200");
    expect_refusal("train --model llama3-70b --topology " + torus + " --chips 64 --tp 8", {"chips", "1152"});
}

TEST_CASE("inputs the fuzzers found are refused as bad input") {
    for (const auto& entry : std::filesystem::directory_iterator(ridgeline::test::data_file("regressions"))) {
        if (entry.path().extension() != ".json") continue;
        const std::string path = entry.path().string();
        for (const std::string& command : {"model " + path, "roofline --hardware " + path, "validate " + path,
                                           "train --scenario " + path, "topology --topology " + path})
            expect_refusal(command, {path});
    }
}

TEST_CASE("serve: the JSON face, the latency-throughput curve and a disaggregated split") {
    const auto result = run_ridgeline("serve --model llama3-70b --hardware dgx-h100 --chips 8 --tp 8 --batch 32 --input-len 2048 "
                                      "--output-len 512 --weights-dtype fp8 --kv-dtype fp8 --requests-per-s 10 --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    CHECK(doc["schema"] == "ridgeline.serve/1");
    CHECK(doc["fits"] == true);
    CHECK(doc["prefill"]["ttft_s"].get<double>() > 0);
    CHECK(doc["decode"]["tpot_s"].get<double>() > 0);
    CHECK(doc["decode"]["per_layer"]["collectives"].size() == 2);  // two tensor all-reduces per layer
    CHECK(doc["throughput"]["output_tokens_per_s_per_chip"].get<double>() ==
          doctest::Approx(doc["throughput"]["output_tokens_per_s"].get<double>() / 8));
    CHECK(doc["cost_per_million_output_tokens_usd"].get<double>() > 0);
    CHECK(doc["max_batch_seqs"].get<double>() >= 32);
    CHECK(doc["disaggregated"]["chips"].get<int>() >= 16);

    const auto curve = run_ridgeline("serve --model llama3-8b --hardware h100 --batch 1..512 --input-len 1024 --output-len 256 --json");
    REQUIRE(curve.exit_code == 0);
    const json curve_doc = json::parse(curve.out);
    CHECK(curve_doc["curve"]["points"].size() == 10);
    CHECK(curve_doc["curve"]["critical_batch_seqs"].get<double>() > 1);

    const auto moe = run_ridgeline("serve --model mixtral-8x7b --hardware dgx-h100 --chips 8 --tp 2 --ep 4 --batch 64 --input-len 512 --output-len 128 --json");
    REQUIRE(moe.exit_code == 0);
    const json moe_doc = json::parse(moe.out);
    CHECK(moe_doc["moe_decode"]["experts_touched_per_layer"].get<double>() < 8.0);
    CHECK(moe_doc["moe_decode"]["experts_touched_per_layer"].get<double>() > 2.0);
}

TEST_CASE("serve: what does not fit is a report with fits false, bad plans and dtypes are refused") {
    const auto big = run_ridgeline("serve --model llama3-70b --hardware h100 --input-len 1024 --output-len 128 --json");
    REQUIRE(big.exit_code == 0);
    const json doc = json::parse(big.out);
    CHECK(doc["fits"] == false);
    CHECK(doc["overflow_bytes"].get<double>() > 0);
    CHECK(doc["overflow"].get<std::string>().find("weights") != std::string::npos);
    const auto long_context = run_ridgeline("serve --model llama3-8b --hardware h100 --batch 512 --input-len 32768 --output-len 1024 --json");
    REQUIRE(long_context.exit_code == 0);
    CHECK(json::parse(long_context.out)["fits"] == false);

    expect_refusal("serve --model llama3-8b --hardware tpu-v5e --weights-dtype fp8 --input-len 128 --output-len 16", {"tpu-v5e", "fp8", "--weights-dtype"});
    expect_refusal("serve --model llama3-8b --hardware tpu-v5e --kv-dtype fp8 --input-len 128 --output-len 16", {"tpu-v5e", "fp8", "--kv-dtype"});
    expect_refusal("serve --model " + ridgeline::test::data_file("hf/qwen2-config.json").string() +
                       " --hardware h100 --chips 14 --tp 14 --input-len 128 --output-len 16",
                   {"--tp", "KV heads"});
    expect_refusal("serve --model llama3-8b --hardware h100 --chips 8 --tp 3 --input-len 128 --output-len 16", {"--tp"});
    expect_refusal("serve --model llama3-8b --hardware h100 --chips 2 --ep 2 --input-len 128 --output-len 16", {"--ep"});
    expect_refusal("serve --model llama3-8b --hardware h100 --chips 2 --batch 3 --input-len 128 --output-len 16", {"--batch"});
    expect_refusal("serve --model llama3-8b --hardware h100 --batch 8..2 --input-len 128 --output-len 16", {"--batch"});
    expect_refusal("serve --model llama3-8b --hardware h100 --kv-dtype int4 --input-len 128 --output-len 16", {"--kv-dtype"});
    expect_refusal("serve --model llama3-8b --hardware h100 --input-len 128", {"--output-len"});
}

TEST_CASE("serve under load: latency percentiles, goodput, and loads or traces it cannot run refused naming the flag or line") {
    const auto result = run_ridgeline("serve --model llama3-8b --hardware dgx-h100 --chips 2 --dp 2 --input-len 1000 --output-len 200 "
                                      "--concurrency 16 --requests 200 --slo-ttft-ms 200 --slo-tpot-ms 50 --json");
    REQUIRE(result.exit_code == 0);
    const json load = json::parse(result.out)["load"];
    CHECK(load["engine"]["name"] == "vllm");
    CHECK(load["requests"] == 200);
    CHECK(load["replicas"] == 2);
    CHECK(load["ttft_s"]["p50"].get<double>() <= load["ttft_s"]["p99"].get<double>());
    CHECK(load["goodput_requests_per_s"].get<double>() <= load["requests_per_s"].get<double>());
    // An A100 gets vLLM's smaller batch defaults, as vLLM chooses them.
    const auto a100 = run_ridgeline("serve --model llama3-8b --hardware a100-80gb --input-len 500 --output-len 50 --concurrency 4 --requests 8 --json");
    REQUIRE(a100.exit_code == 0);
    CHECK(json::parse(a100.out)["load"]["engine"]["max_seqs"] == 256);

    const std::string job = "serve --model llama3-8b --hardware h100 --input-len 100 --output-len 10 ";
    expect_refusal(job + "--requests 5", {"--requests", "--concurrency"});
    expect_refusal(job + "--slo-ttft-ms 100", {"--slo-ttft-ms"});
    expect_refusal(job + "--concurrency 2 --request-rate 3", {"--concurrency", "--request-rate"});
    expect_refusal(job + "--concurrency 2 --engine nosuch", {"nosuch"});
    expect_refusal(job + "--trace /nonexistent/trace.jsonl", {"/nonexistent/trace.jsonl"});
    const std::string trace = write_file("late.jsonl", "{\"arrival_s\": 2, \"input_tokens\": 5, \"output_tokens\": 5}\n"
                                                       "{\"arrival_s\": 1, \"input_tokens\": 5, \"output_tokens\": 5}\n");
    expect_refusal(job + "--trace " + trace, {"late.jsonl:2", "arrival_s"});
    expect_refusal("serve --model llama3-70b --hardware dgx-h100 --chips 8 --tp 4 --pp 2 --input-len 100 --output-len 10 --concurrency 2",
                   {"pp", "pipeline"});
}

TEST_CASE("search serve: the best configurations meeting the SLOs and the Pareto front") {
    const auto result = run_ridgeline("search serve --model llama3-8b --hardware dgx-h100 --chips 1..8 --input-len 1024 --output-len 256 "
                                      "--slo-ttft-ms 500 --slo-tpot-ms 30 --top 3 --max-batch 128 --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    CHECK(doc["schema"] == "ridgeline.serve-search/1");
    CHECK(doc["best"].size() == 3);
    for (const auto& c : doc["best"]) {
        CHECK(c["meets_slo"] == true);
        CHECK(c["tpot_s"].get<double>() <= 0.030);
    }
    CHECK(doc["pareto"].size() >= 2);
    const auto table = run_ridgeline("search serve --model llama3-8b --hardware h100 --chips 1 --input-len 128 --output-len 128 "
                                     "--slo-ttft-ms 100 --slo-tpot-ms 20 --objective throughput --max-batch 16");
    REQUIRE(table.exit_code == 0);
    CHECK(table.out.find("Pareto front") != std::string::npos);
    json unpriced = shipped_chip();
    unpriced.erase("price_usd_per_chip_hour");
    expect_refusal("search serve --model llama3-8b --hardware " + write_file("unpriced-h100.json", unpriced.dump()) +
                       " --chips 1 --input-len 128 --output-len 128 --slo-ttft-ms 100 --slo-tpot-ms 20",
                   {"--objective", "price"});
    expect_refusal("search serve --model llama3-8b --hardware h100 --chips 8..x --input-len 128 --output-len 128 --slo-ttft-ms 100 --slo-tpot-ms 20",
                   {"--chips"});
}

TEST_CASE("validate: serving records carry output tokens/s and are summarised apart from training") {
    const std::string runs = (ridgeline::test::source_dir() / "tests" / "data" / "runs" / "published-serve-records.json").string();
    const auto result = run_ridgeline("validate " + runs + " --json");
    REQUIRE(result.exit_code == 0);
    const json doc = json::parse(result.out);
    for (const auto& record : doc["records"]) {
        CHECK(record["kind"] == "serve");
        REQUIRE(record["status"] == "ok");
        CHECK(record["error"].get<double>() == doctest::Approx(record["predicted_output_tokens_per_s"].get<double>() /
                                                                   record["measured_output_tokens_per_s"].get<double>() - 1));
    }
    CHECK(doc["summary"]["serve"]["count"] == doc["records"].size());
    CHECK(doc["records"].size() >= 20);
    CHECK(doc["summary"]["count"] == 0);
}

TEST_CASE("software stacks: each shipped one loads and runs where its attention kernel is measured, bad ones are refused") {
    const json h100_attention = read_json(ridgeline::test::source_dir() / "hardware" / "chips" / "h100-sxm.json")["kernels"]["attention"];
    for (const auto& entry : std::filesystem::directory_iterator(ridgeline::test::source_dir() / "stacks")) {
        const json stack = read_json(entry.path());
        CAPTURE(entry.path().string());
        CHECK(stack["fitted"]["origin"].get<std::string>().size() > 10);  // every fitted number says where it comes from
        // An inference engine runs serve; a training stack train.
        const bool serves_only = stack.contains("jobs") && stack["jobs"] == json::array({"serving"});
        const auto r = run_ridgeline((serves_only ? "serve --model llama3-8b --hardware dgx-h100 --chips 8 --batch 8 --input-len 512 --output-len 128"
                                                  : "train --model llama3-8b --hardware dgx-h100 --chips 8") +
                                     std::string(" --stack ") + stack["name"].get<std::string>() + " --json");
        const std::string family = stack["attention"];
        bool measured = h100_attention.contains(family);  // or a fallback the stack names
        for (const auto& fallback : stack.value("attention_fallback", json::array())) measured = measured || h100_attention.contains(fallback.get<std::string>());
        if (measured) {
            REQUIRE(r.exit_code == 0);
            CHECK(json::parse(r.out)["stack"]["name"] == stack["name"]);
        } else {  // a kernel family the H100 has no measurements of is refused, naming the measured ones
            CHECK(r.exit_code == 2);
            CHECK(r.err.find("kernels.attention." + family) != std::string::npos);
            CHECK(r.err.find("flash-attention-2") != std::string::npos);
        }
    }
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 8 --stack nope", {"--stack", "megatron-core", "vllm"});
    expect_refusal("serve --model llama3-8b --hardware h100 --input-len 100 --output-len 10 --stack nope", {"--stack", "tensorrt-llm"});
    json bad = read_json(ridgeline::test::source_dir() / "stacks" / "pytorch-eager.json");
    bad["elementwise"] = "sometimes";
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 8 --stack " + write_file("bad-stack.json", bad.dump()), {"bad-stack.json", "elementwise"});
    bad = read_json(ridgeline::test::source_dir() / "stacks" / "pytorch-eager.json");
    bad["fitted"]["layer_overhead_fraction"] = -0.1;
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 8 --stack " + write_file("bad-stack2.json", bad.dump()), {"bad-stack2.json", "fitted.layer_overhead_fraction"});
    json scenario = read_json(ridgeline::test::source_dir() / "scenarios" / "llama3-70b-tpu-v5p-512.json");
    scenario["stack"] = "nope";
    expect_refusal("train --scenario " + write_file("stack-scenario.json", scenario.dump()), {"stack-scenario.json", "stack", "maxtext"});
}

TEST_CASE("the stack's attention kernel prices attention at its measured rate: FlashAttention-2 against cuDNN on the H100") {
    // Measured on the H100 at seq 4096 (forward + backward): FA2 7.19 ms, cuDNN 4.19 ms.
    double fa2_s = 0, cudnn_s = 0;
    const json measured = read_json(ridgeline::test::data_file("reference/gpu-kernels-h100.json"));
    for (const auto& a : measured["attention"])
        if (a["seq"].get<int>() == 4096) {
            if (a["kernel"].get<std::string>() == "cudnn") cudnn_s = a["forward_backward_s"].get<double>();
            else fa2_s = a["forward_backward_s"].get<double>();
        }
    REQUIRE(fa2_s > 0);
    REQUIRE(cudnn_s > 0);
    const auto attention_s = [](const std::string& stack) {
        const json doc = json::parse(
            run_ridgeline("train --model llama3-8b --hardware dgx-h100 --chips 8 --seq-len 4096 --stack " + stack + " --json").out);
        for (const auto& c : doc["breakdown"])
            if (c["name"] == "attention") return c["time_s"].get<double>();
        return 0.0;
    };
    // pytorch-compile and torchtitan differ from megatron-core in their kernels only where attention is concerned.
    CHECK(attention_s("torchtitan") / attention_s("megatron-core") == doctest::Approx(fa2_s / cudnn_s).scale(0).epsilon(0.05));
}

TEST_CASE("a stack whose attention kernels the chip has no measurements of is refused once, naming both, a fallback is named") {
    // Splash is TPU-only (MaxText's stack falls back to cuDNN on GPUs; a copy without that fallback is
    // refused); Megatron-Core's cuDNN and its FlashAttention-2 fallback are GPU kernels.
    json splash_only = read_json(ridgeline::test::source_dir() / "stacks" / "maxtext.json");
    splash_only.erase("attention_fallback");
    const std::string splash_file = write_file("splash-only.json", splash_only.dump());
    for (const std::string& command : {std::string("train --model llama3-8b --hardware tpu-v5e --chips 64 --stack megatron-core"),
                                       std::string("search train --model llama3-8b --hardware tpu-v5e --chips 64 --stack megatron-core"),
                                       "train --model llama3-8b --hardware h100 --chips 8 --stack " + splash_file})
        expect_refusal(command, {"kernels.attention", "measured:"});
    const auto maxtext = run_ridgeline("train --model llama3-8b --hardware h100 --chips 8 --stack maxtext --json");
    REQUIRE(maxtext.exit_code == 0);
    CHECK(json::parse(maxtext.out)["stack"]["attention"].get<std::string>().rfind("cudnn (splash has no measurements on h100", 0) == 0);
    // The A100 has no cuDNN measurements: Megatron-Core runs its FlashAttention-2 fallback, and says so.
    const auto result = run_ridgeline("train --model llama3-8b --hardware a100-80gb --chips 8 --stack megatron-core --json");
    REQUIRE(result.exit_code == 0);
    const std::string attention = json::parse(result.out)["stack"]["attention"];
    CHECK(attention.rfind("flash-attention-2 (cudnn has no measurements on a100-80gb", 0) == 0);
}
