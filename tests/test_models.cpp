// Shipped models and Hugging Face imports against published parameter counts.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model/model_catalog.hpp"
#include "model/transformer_math.hpp"
#include "test_support.hpp"

using namespace ridgeline;

TEST_CASE("every shipped model matches its published parameter count within 0.5%") {
    const auto models = list_models(test::source_dir());
    CHECK(models.size() >= 10);
    for (const auto& entry : models) {
        CAPTURE(entry.name);
        const ModelSpec model = load_model_file(entry.file);
        REQUIRE(model.published_params.has_value());
        CHECK(test::relative_error(count_params(model).total, *model.published_params) <= 0.005);
        if (model.published_active_params)  // published active counts are rounded to ~2 digits
            CHECK(test::relative_error(count_params(model).active, *model.published_active_params) <= 0.03);
    }
}

// Llama 4 Maverick's layout: after the dense layers, every layer_step-th layer is MoE. A tiny
// model worked by hand: 4 layers, d_model 64, gated MLPs (3 matrices), dense width 128, four
// experts of width 64 plus a 64 x 4 router. Every layer MoE: 4 x (4 x 3 x 64 x 64 + 256); every
// other one: 2 of those and 2 dense MLPs of 3 x 64 x 128.
TEST_CASE("moe.layer_step interleaves dense and MoE layers") {
    ModelSpec model;
    model.name = "tiny";
    model.n_layers = 4;
    model.d_model = 64;
    model.n_heads = 4;
    model.n_kv_heads = 4;
    model.head_dim = 16;
    model.d_ff = 128;
    model.vocab_size = 1000;
    model.moe = MoeSpec{4, 1, 64, 0, 0, 1, 0, 0};
    const double every = count_params(model).total;
    model.moe->layer_step = 2;
    const double alternate = count_params(model).total;
    CHECK(model.moe_layers() == 2);
    CHECK(model.dense_layers() == 2);
    const double moe_mlp = 4.0 * 3 * 64 * 64 + 64 * 4, dense_mlp = 3.0 * 64 * 128;
    CHECK(every - alternate == doctest::Approx(2.0 * (moe_mlp - dense_mlp)));
    model.moe->first_dense_layers = 1;
    model.moe->layer_step = 2;  // layers 1..3 after one dense: one MoE layer (the 2nd of the 3)
    CHECK(model.moe_layers() == 1);
}

TEST_CASE("the models the issue names are all shipped") {
    for (const char* name : {"llama3-8b", "llama3-70b", "llama3-405b", "llama2-7b", "llama2-13b", "llama2-70b",
                             "gpt3-175b", "mixtral-8x7b", "qwen3-235b-a22b", "deepseek-v3"}) {
        CAPTURE(name);
        CHECK_NOTHROW((void)resolve_model(name, test::source_dir()));
    }
    // Aliases resolve case-insensitively.
    CHECK(resolve_model("Meta-Llama/Meta-Llama-3-70B", test::source_dir()).name == "llama3-70b");
}

TEST_CASE("Hugging Face config.json imports match the published counts (tests/data/hf/SOURCES.md)") {
    struct Expectation {
        const char* file;
        double total;
        double active;  // 0 where no active count is published
    };
    const Expectation expectations[] = {
        {"llama-config.json", 8.03e9, 0},       {"mistral-config.json", 7.24e9, 0},
        {"mixtral-config.json", 4.67e10, 1.29e10}, {"qwen2-config.json", 7.62e9, 0},
        {"qwen3-config.json", 8.19e9, 0},       {"qwen3_moe-config.json", 3.05e10, 3.3e9},
        {"deepseek_v3-config.json", 6.71e11, 3.7e10},
        {"gemma2-config.json", 9.24e9, 0},          {"gemma3_text-config.json", 1.0e9, 0},
        {"phi3-config.json", 3.82e9, 0},            {"gpt_oss-config.json", 1.1683e11, 5.71e9},
        // Active counts as this model counts them (with the input embedding); SOURCES.md derives them.
        {"deepseek_v2-config.json", 1.57e10, 2.61e9}, {"kimi_k2-config.json", 1.02647e12, 3.2e10},
        {"glm4_moe-config.json", 1.0724e11, 1.324e10}, {"llama4-config.json", 4.0e11, 1.7e10},
    };
    for (const auto& expected : expectations) {
        CAPTURE(expected.file);
        const ModelSpec model = resolve_model(test::data_file(std::string("hf/") + expected.file).string(), test::source_dir());
        const ParamCounts counts = count_params(model);
        CHECK(test::relative_error(counts.total, expected.total) <= 0.005);
        if (expected.active > 0) CHECK(test::relative_error(counts.active, expected.active) <= 0.03);
    }
}

TEST_CASE("an HF config and the shipped file describe the same LLaMA-3 8B") {
    const ModelSpec from_hf = load_hf_config(test::data_file("hf/llama-config.json"));
    const ModelSpec shipped = resolve_model("llama3-8b", test::source_dir());
    CHECK(count_params(from_hf).total == count_params(shipped).total);
    CHECK(kv_cache_bytes_per_token(from_hf, Dtype::bf16) == kv_cache_bytes_per_token(shipped, Dtype::bf16));
    CHECK(flops_per_token(from_hf, 8192, true).forward() == flops_per_token(shipped, 8192, true).forward());
}

TEST_CASE("explicit head_dim is used, never d_model / heads") {
    const ModelSpec qwen3 = resolve_model("qwen3-235b-a22b", test::source_dir());
    CHECK(qwen3.head_dim == 128);
    CHECK(qwen3.n_heads * qwen3.head_dim != qwen3.d_model);  // 64 * 128 = 8192 != 4096
    // Attention projections use N * head_dim: q and o are 4096 x 8192, k and v 4096 x 512.
    CHECK(count_params(qwen3).attention_per_layer == 4096.0 * 128 * (2 * 64 + 2 * 4) + 2 * 128);
}

namespace {

// A Hugging Face fixture, edited, written where `relative` says under this test's scratch folder.
std::string write_config(const std::string& relative, const nlohmann::json& config) {
    const auto path = test::scratch_dir("models") / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << config.dump(2);
    return path.string();
}
nlohmann::json fixture(const std::string& name) { return test::read_json(test::data_file("hf/" + name)); }

}  // namespace

TEST_CASE("Hugging Face families carry windows, chunks, sinks, MLA, shared experts and MoE interleaving into the model") {
    const ModelSpec gemma2 = load_hf_config(test::data_file("hf/gemma2-config.json"));
    CHECK(gemma2.tied_embeddings);  // Gemma's default: the config does not say
    REQUIRE(gemma2.window.has_value());
    CHECK(gemma2.window->tokens == 4096);
    CHECK(gemma2.window->local_layers == 21);  // even-indexed layers of 42
    CHECK(gemma2.description.find("soft-capping") != std::string::npos);

    const ModelSpec gemma3 = load_hf_config(test::data_file("hf/gemma3_text-config.json"));
    CHECK(gemma3.qk_norm);
    REQUIRE(gemma3.window.has_value());
    CHECK(gemma3.window->local_layers == 22);  // layers 5, 11, 17, 23 of 26 are global

    const ModelSpec phi3 = load_hf_config(test::data_file("hf/phi3-config.json"));
    CHECK(phi3.name == "Phi-3-mini-4k-instruct");  // _name_or_path
    REQUIRE(phi3.window.has_value());
    CHECK(phi3.window->tokens == 2047);
    CHECK(phi3.window->local_layers == 32);

    const ModelSpec gpt_oss = load_hf_config(test::data_file("hf/gpt_oss-config.json"));
    CHECK(gpt_oss.name == "gpt_oss-config");  // no _name_or_path: the file's name
    CHECK(gpt_oss.linear_bias);
    REQUIRE(gpt_oss.window.has_value());
    CHECK(gpt_oss.window->local_layers == 18);
    CHECK(gpt_oss.description.find("sinks") != std::string::npos);
    CHECK(count_params(gpt_oss).total == count_params(resolve_model("gpt-oss-120b", test::source_dir())).total);

    const ModelSpec lite = load_hf_config(test::data_file("hf/deepseek_v2-config.json"));
    REQUIRE(lite.mla.has_value());
    CHECK(lite.mla->q_lora_rank == 0);  // q_lora_rank null: queries projected directly
    REQUIRE(lite.moe.has_value());
    CHECK(lite.moe->n_shared_experts == 2);
    CHECK(lite.moe->first_dense_layers == 1);
    CHECK(lite.moe->routing_groups == 0);  // one group limits nothing

    // Kimi K2 is read as DeepSeek-V3's architecture, by its fields and `architectures`.
    const ModelSpec kimi = load_hf_config(test::data_file("hf/kimi_k2-config.json"));
    REQUIRE(kimi.mla.has_value());
    REQUIRE(kimi.moe.has_value());
    CHECK(kimi.moe->n_experts == 384);
    CHECK(kimi.moe->first_dense_layers == 1);
    CHECK(kimi.mtp_depth == 0);
    CHECK(kimi.description.find("deepseek_v3") != std::string::npos);
    nlohmann::json renamed = fixture("kimi_k2-config.json");
    renamed["model_type"] = "kimi_k2_preview";  // unknown, but architectures names DeepseekV3ForCausalLM
    CHECK(count_params(load_hf_config(write_config("renamed/config.json", renamed))).total == count_params(kimi).total);

    const ModelSpec glm = load_hf_config(test::data_file("hf/glm4_moe-config.json"));
    CHECK(glm.qkv_bias);
    CHECK_FALSE(glm.qk_norm);  // use_qk_norm false (GLM-4.5-Air)
    CHECK(glm.mtp_depth == 1);
    REQUIRE(glm.moe.has_value());
    CHECK(glm.moe->n_shared_experts == 1);
    CHECK(glm.moe->first_dense_layers == 1);

    // Llama 4 Maverick: the language model of text_config, MoE in every second layer with a shared
    // expert, dense layers intermediate_size_mlp wide, chunked attention on the RoPE layers.
    const ModelSpec maverick = load_hf_config(test::data_file("hf/llama4-config.json"));
    REQUIRE(maverick.moe.has_value());
    CHECK(maverick.moe->layer_step == 2);
    CHECK(maverick.moe->first_dense_layers == 0);
    CHECK(maverick.moe->n_shared_experts == 1);
    CHECK(maverick.moe->d_ff_expert == 8192);
    CHECK(maverick.d_ff == 16384);
    CHECK(maverick.moe_layers() == 24);
    REQUIRE(maverick.window.has_value());
    CHECK(maverick.window->kind == LocalAttention::chunked);
    CHECK(maverick.window->tokens == 8192);
    CHECK(maverick.window->local_layers == 36);  // every 4th layer is NoPE and global
    CHECK(maverick.description.find("vision") != std::string::npos);
    const ModelSpec shipped = resolve_model("llama4-maverick", test::source_dir());
    CHECK(count_params(maverick).total == count_params(shipped).total);
    CHECK(count_params(maverick).active == count_params(shipped).active);
    CHECK(kv_cache_bytes_per_sequence(maverick, 65536, Dtype::bf16) == kv_cache_bytes_per_sequence(shipped, 65536, Dtype::bf16));
}

TEST_CASE("Hugging Face configs: MoE layouts map to layer_step and first dense layers, or are refused") {
    nlohmann::json qwen = fixture("qwen3_moe-config.json");
    qwen["mlp_only_layers"] = {0, 1, 2, 3};
    const ModelSpec leading = load_hf_config(write_config("leading-dense.json", qwen));
    CHECK(leading.moe->first_dense_layers == 4);
    CHECK(leading.moe->layer_step == 1);
    qwen["mlp_only_layers"] = nlohmann::json::array();
    qwen["decoder_sparse_step"] = 2;  // layers 1, 3, 5, ... are MoE
    const ModelSpec alternate = load_hf_config(write_config("sparse-step.json", qwen));
    CHECK(alternate.moe->layer_step == 2);
    CHECK(alternate.moe_layers() == 24);
    qwen["decoder_sparse_step"] = 1;
    qwen["mlp_only_layers"] = {10};  // a dense layer in the middle: not representable
    (void)test::model_refusal(write_config("hole.json", qwen), "mlp_only_layers");

    nlohmann::json deepseek = fixture("deepseek_v3-config.json");
    deepseek["moe_layer_freq"] = 2;  // layers 4, 6, ..., 60 after the 3 dense ones
    const ModelSpec every_other = load_hf_config(write_config("freq.json", deepseek));
    CHECK(every_other.moe->first_dense_layers == 3);
    CHECK(every_other.moe->layer_step == 2);
    CHECK(every_other.moe_layers() == 29);
    deepseek.erase("first_k_dense_replace");  // transformers' default differs by family
    (void)test::model_refusal(write_config("no-first-k.json", deepseek), "first_k_dense_replace");

    nlohmann::json llama4 = fixture("llama4-config.json");
    llama4["text_config"]["moe_layers"] = {1, 2, 5};
    (void)test::model_refusal(write_config("moe-layers.json", llama4), "text_config.moe_layers");
}

TEST_CASE("Hugging Face configs: an architecture field the importer does not understand is refused, naming it") {
    nlohmann::json llama = fixture("llama-config.json");
    llama["qk_layernorm"] = true;
    CHECK(test::model_refusal(write_config("qk-layernorm.json", llama), "qk_layernorm").find("not understood") != std::string::npos);
    llama.erase("qk_layernorm");
    llama["sliding_window"] = 4096;  // Llama's code has no window: not silently applied, not silently dropped
    (void)test::model_refusal(write_config("llama-window.json", llama), "sliding_window");
    llama["sliding_window"] = nullptr;  // null sets nothing
    llama["rope_local_base_freq"] = 10000;  // rotary settings and token ids change nothing counted
    llama["image_token_index"] = 5;
    CHECK_NOTHROW((void)load_hf_config(write_config("llama-null.json", llama)));
    llama["mlp_bias"] = true;  // MLP biases without attention biases: not representable
    (void)test::model_refusal(write_config("mlp-bias.json", llama), "mlp_bias");

    nlohmann::json maverick = fixture("llama4-config.json");
    maverick["text_config"]["num_kv_shared_layers"] = 4;
    (void)test::model_refusal(write_config("kv-shared.json", maverick), "text_config.num_kv_shared_layers");

    nlohmann::json gemma = fixture("gemma3_text-config.json");
    gemma["use_bidirectional_attention"] = true;
    (void)test::model_refusal(write_config("bidirectional.json", gemma), "use_bidirectional_attention");

    nlohmann::json kimi = fixture("kimi_k2-config.json");
    kimi["layer_types"] = nlohmann::json::array();  // DeepSeek-V3's code has no local attention
    (void)test::model_refusal(write_config("kimi-layers.json", kimi), "layer_types");
}

TEST_CASE("an imported model is named by _name_or_path, its file, or its folder") {
    nlohmann::json config = fixture("mistral-config.json");
    CHECK(load_hf_config(write_config("naming/mistral-7b.json", config)).name == "mistral-7b");
    CHECK(load_hf_config(write_config("naming/Mistral-7B-v0.1/config.json", config)).name == "Mistral-7B-v0.1");
    CHECK(load_hf_config(write_config("naming/models--mistralai--Mistral-7B-v0.1/snapshots/26bca36b/config.json", config)).name ==
          "mistralai/Mistral-7B-v0.1");
    config["_name_or_path"] = "mistralai/Mistral-7B-v0.1";
    CHECK(load_hf_config(write_config("naming/other.json", config)).name == "mistralai/Mistral-7B-v0.1");
}
