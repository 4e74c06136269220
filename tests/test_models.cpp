// Shipped models and Hugging Face imports against published parameter counts.
#include <doctest/doctest.h>

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
