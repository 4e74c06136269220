// The dev set against itself and the sources' own formulas: a transcription error (a swapped
// batch, a mistyped step time) shows here before it shows as a model error. Megatron's FLOP count
// is worked in the test from Narayanan et al. 2021 (arXiv 2104.04473), eq. 3.
#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace {

const nlohmann::json& dev_set() {
    static const nlohmann::json doc = ridgeline::test::read_json(ridgeline::test::data_file("runs/published-runs-dev.json"));
    return doc;
}

double value(const nlohmann::json& measured, const char* key) { return measured.at(key).at("value").get<double>(); }

// How many of a run file's records `validate` models (a finite error, status ok).
int modelled_records(const std::filesystem::path& file) {
    const auto result = ridgeline::test::run_ridgeline("validate " + file.string() + " --json");
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const nlohmann::json doc = nlohmann::json::parse(result.out);
    int modelled = 0;
    for (const auto& r : doc.at("records")) modelled += r.at("status") == "ok" && std::isfinite(r.at("error").get<double>());
    return modelled;
}

}  // namespace

TEST_CASE("dev set: a training record's step time, throughput and batch agree (tokens/s x step = batch tokens)") {
    int checked = 0;
    for (const auto& r : dev_set().at("records")) {
        const auto& m = r.at("measured");
        const auto& w = r.at("workload");
        if (r.at("kind") != "train" || m.at("tokens_per_s").is_null() || m.at("step_time_s").is_null() || w.at("global_batch_tokens").is_null())
            continue;
        INFO(r.at("id").get<std::string>());
        // Sources round what they print (a step of 4 significant figures): 1% is a rounding, not a typo.
        CHECK(std::abs(value(m, "tokens_per_s") * value(m, "step_time_s") / w.at("global_batch_tokens").get<double>() - 1.0) < 0.01);
        CHECK(w.at("global_batch_tokens").get<double>() == w.at("global_batch_seqs").get<double>() * w.at("seq_len").get<double>());
        ++checked;
    }
    CHECK(checked >= 300);
}

TEST_CASE("dev set: TFLOP/s stated with recomputation are Megatron's 96 B s l h^2 (1 + s/6h + V/16lh) over the step and the GPUs") {
    // Eq. 3 of Narayanan et al. counts a GPT layer of h x 4h MLP and full multi-head attention, the
    // forward pass twice (recomputation) and the logits once: it applies to records of that shape.
    int checked = 0;
    for (const auto& r : dev_set().at("records")) {
        const auto& m = r.at("measured");
        const auto& model = r.at("model");
        const std::string accounting = r.at("flops_accounting");
        if (r.at("kind") != "train" || m.at("tflops_per_device").is_null() || m.at("step_time_s").is_null() ||
            accounting.find("includes-recompute") == std::string::npos || !model.at("moe").is_null())
            continue;
        const double h = model.at("d_model"), l = model.at("layers"), V = model.at("vocab");
        if (model.at("d_ff").get<double>() != 4 * h || model.at("gated_mlp").get<bool>() || model.at("kv_heads") != model.at("heads")) continue;
        const double s = r.at("workload").at("seq_len"), B = r.at("workload").at("global_batch_seqs");
        const double flops = 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
        const double tflops = flops / (value(m, "step_time_s") * r.at("hardware").at("count").get<double>()) / 1e12;
        INFO(r.at("id").get<std::string>());
        CHECK(std::abs(tflops / value(m, "tflops_per_device") - 1.0) < 0.01);
        ++checked;
    }
    // Narayanan et al.'s tables, MT-NLG's and BigScience's BLOOM logs.
    CHECK(checked >= 30);
}

TEST_CASE("dev set: a record whose software note says Megatron-DeepSpeed names that framework, so it runs on that stack") {
    // validate picks the stack by `software.framework`; MT-NLG's records once said megatron-lm while
    // their note (and the paper's title) said Megatron-DeepSpeed, and ran on the wrong stack.
    int checked = 0;
    for (const auto& r : dev_set().at("records")) {
        std::string note = r.at("software").value("note", "");
        for (char& c : note) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (note.find("megatron-deepspeed") == std::string::npos) continue;
        INFO(r.at("id").get<std::string>());
        CHECK(r.at("software").at("framework") == "megatron-deepspeed");
        ++checked;
    }
    CHECK(checked >= 11);  // BLOOM's eight and MT-NLG's three
}

TEST_CASE("runs awaiting a stack: out of sample by construction, each modelled, each source held out whole") {
    // Sources whose code no stack file describes live apart until one does: nothing fits on them, so none
    // of their sources may be in the dev set, and each has records enough to be held out once it joins.
    const std::filesystem::path file = ridgeline::test::data_file("runs/published-runs-awaiting-stack.json");
    const nlohmann::json awaiting = ridgeline::test::read_json(file);
    std::set<std::string> dev_sources;
    std::map<std::string, int> per_source;
    for (const auto& r : dev_set().at("records")) dev_sources.insert(r.at("source").at("key").get<std::string>());
    for (const auto& r : awaiting.at("records")) {
        const std::string key = r.at("source").at("key");
        INFO(r.at("id").get<std::string>());
        CHECK(dev_sources.count(key) == 0);
        ++per_source[key];
    }
    CHECK(!per_source.empty());
    for (const auto& [key, count] : per_source) CHECK_MESSAGE(count >= 2, key);
    CHECK(modelled_records(file) == static_cast<int>(awaiting.at("records").size()));
}

TEST_CASE("single-source runs: out of sample by construction, each modelled, and refused by --cross-validate") {
    // Published runs that are the only record of their source cannot be held out by source, so they live
    // in their own file, which nothing fits on: none of their sources may appear in the dev set.
    const std::filesystem::path file = ridgeline::test::data_file("runs/published-runs-single-source.json");
    const nlohmann::json singles = ridgeline::test::read_json(file);
    std::set<std::string> dev_sources, single_sources;
    for (const auto& r : dev_set().at("records")) dev_sources.insert(r.at("source").at("key").get<std::string>());
    for (const auto& r : singles.at("records")) {
        const std::string key = r.at("source").at("key");
        INFO(r.at("id").get<std::string>());
        CHECK(dev_sources.count(key) == 0);
        CHECK(single_sources.insert(key).second);  // one record a source, or it belongs in the dev set
        const auto& m = r.at("measured");
        const auto& w = r.at("workload");
        CHECK(std::abs(value(m, "tokens_per_s") * value(m, "step_time_s") / w.at("global_batch_tokens").get<double>() - 1.0) < 0.01);
    }
    CHECK(single_sources.size() >= 3);
    CHECK(modelled_records(file) == static_cast<int>(singles.at("records").size()));
    const auto cv = ridgeline::test::run_ridgeline("validate " + file.string() + " --cross-validate");
    CHECK(cv.exit_code == 2);
    CHECK(cv.err.find("single record") != std::string::npos);
}

TEST_CASE("dev set: the OLMo-core records are the README rows at its commit, their shapes OLMo-core's llama_like rule") {
    const nlohmann::json table = ridgeline::test::read_json(ridgeline::test::data_file("runs/tables/olmo-core-readme-e27ba7455.json"));
    std::map<std::string, const nlohmann::json*> records;  // "7b/bf16" -> record
    for (const auto& r : dev_set().at("records"))
        if (r.at("source").at("key") == "allenai_olmo_core_readme_2024-11") {
            const std::string id = r.at("id");  // olmo-core-<size>-h100-8gpu-s4096-<precision>-<commit>
            const auto size_end = id.find('-', 10);
            records[id.substr(10, size_end - 10) + "/" + r.at("precision").get<std::string>()] = &r;
        }
    const auto& rows = table.at("rows");
    REQUIRE(rows.size() == 8);
    CHECK(records.size() == rows.size());
    // Padded to a multiple of 128, as TokenizerConfig.padded_vocab_size does.
    const int vocab = 128 * ((table.at("tokenizer_vocab").get<int>() + 127) / 128);
    for (const auto& row : rows) {
        std::string size = row.at("model_size");
        for (char& c : size) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const std::string key = size + "/" + row.at("precision").get<std::string>();
        CAPTURE(key);
        REQUIRE(records.count(key) == 1);
        const nlohmann::json& r = *records.at(key);
        const double gpus = r.at("hardware").at("count").get<double>();
        CHECK(gpus == 8);  // the launch default: one node of eight
        CHECK(value(r.at("measured"), "tokens_per_s") == row.at("tokens_per_s_per_device").get<double>() * gpus);
        CHECK(r.at("workload").at("seq_len") == row.at("context_length"));
        CHECK(r.at("workload").at("micro_batch_seqs") == row.at("rank_microbatch_sequences"));
        CHECK(r.at("workload").at("global_batch_seqs") == row.at("global_batch_sequences"));
        CHECK(r.at("plan").at("fsdp") == gpus);
        CHECK(r.at("plan").at("recompute") == "none");
        // llama_like: int(8 d / 3), times the multiplier where there is one, rounded up to the multiple.
        const auto& shape = table.at("shapes").at(row.at("model_size").get<std::string>());
        const int d_model = shape.at("d_model");
        int hidden = static_cast<int>(8.0 * d_model / 3.0);
        if (!shape.at("multiplier").is_null()) hidden = static_cast<int>(shape.at("multiplier").get<double>() * hidden);
        const int multiple = shape.at("multiple_of");
        hidden = multiple * ((hidden + multiple - 1) / multiple);
        const auto& model = r.at("model");
        CHECK(model.at("d_model") == d_model);
        CHECK(model.at("layers") == shape.at("layers"));
        CHECK(model.at("heads") == shape.at("heads"));
        CHECK(model.at("kv_heads") == shape.at("kv_heads"));
        CHECK(model.at("d_ff") == hidden);
        CHECK(model.at("vocab") == vocab);
        CHECK(model.at("tied_embeddings") == false);
    }
}

TEST_CASE("dev set: the TinyLlama records are its README's statements, and its 56% MFU is their 24k tokens/s on their shape") {
    // jzhang38/TinyLlama README at bf12224: "24k tokens per second per A100-40G GPU, which translates to 56% model
    // flops utilization", "(1.1B param, 22B tokens) in 32 hours with 8 A100", "16 A100-40G GPUs", "2 million tokens
    // (2048 * 1024)", and 3456 A100 GPU hours for 300B tokens.
    std::map<double, const nlohmann::json*> by_gpus;
    for (const auto& r : dev_set().at("records"))
        if (r.at("source").at("key") == "tinyllama_readme_2023-09") by_gpus[r.at("hardware").at("count").get<double>()] = &r;
    REQUIRE(by_gpus.size() == 2);
    REQUIRE(by_gpus.count(8) == 1);
    REQUIRE(by_gpus.count(16) == 1);
    const nlohmann::json& eight = *by_gpus.at(8);
    const nlohmann::json& sixteen = *by_gpus.at(16);
    CHECK(value(eight.at("measured"), "tokens_per_s") / 8 == doctest::Approx(24000.0));
    CHECK(22e9 / (32 * 3600.0 * 8) == doctest::Approx(24000.0).epsilon(0.01));  // the README's two statements agree
    CHECK(value(sixteen.at("measured"), "tokens_per_s") == doctest::Approx(300e9 / (3456 * 3600.0) * 16).epsilon(1e-6));
    CHECK(sixteen.at("workload").at("global_batch_seqs") == 1024);
    CHECK(sixteen.at("workload").at("seq_len") == 2048);
    // The shape as lit_gpt/config.py's tiny_LLaMA_1b gives it, counted by hand: per layer q and o (d x d), k and v
    // (d x 4 groups x 64), the SwiGLU's three d x 5632 matrices; the untied head; the embedding table is not a matmul.
    const auto& m = eight.at("model");
    const double d = m.at("d_model"), L = m.at("layers"), kv = m.at("kv_heads"), hd = m.at("head_dim"), ff = m.at("d_ff"), V = m.at("vocab");
    CHECK(m == sixteen.at("model"));
    const double matmul_params = L * (2 * d * d + 2 * d * kv * hd + 3 * d * ff) + V * d;
    CHECK(matmul_params == doctest::Approx(1.0344e9).epsilon(1e-3));
    // 6 N a token plus attention's 12 L d s (both matmuls, forward and backward, unmasked): at 24k a GPU that is
    // 56% of the A100's 312 TFLOP/s, the README's figure (52% with the causal half).
    const double flops_per_token = 6 * matmul_params + 12 * L * d * 2048;
    CHECK(24000.0 * flops_per_token / 312e12 == doctest::Approx(0.56).epsilon(0.01));
}
