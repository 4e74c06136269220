// Sliding-window and chunked attention: keys per query, KV cache, FLOPs and serving capacity,
// each against counts worked by hand, and the files that declare windows.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "inference/serving.hpp"
#include "inference/serving_rules.hpp"
#include "model/model_catalog.hpp"
#include "model/transformer_math.hpp"
#include "scenario/serving_setup.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

ModelSpec windowed(LocalAttention kind, std::int64_t tokens, std::int64_t local_layers, std::int64_t layers) {
    ModelSpec m;
    m.n_layers = layers;
    m.d_model = 64;
    m.n_heads = 4;
    m.n_kv_heads = 2;
    m.head_dim = 16;
    m.d_ff = 128;
    m.vocab_size = 100;
    m.window = AttentionWindow{kind, tokens, local_layers};
    return m;
}

// A file written for one test: `text` as `name` in a scratch directory.
std::string write_file(const std::string& name, const std::string& text) {
    const auto path = test::scratch_dir("local_attention") / name;
    std::ofstream(path) << text;
    return path.string();
}

}  // namespace

TEST_CASE("a window of 3 over 8 causal queries shows 1, 2, 3, 3, 3, 3, 3, 3 keys and chunks of 3 show 1, 2, 3, 1, 2, 3, 1, 2") {
    const ModelSpec sliding = windowed(LocalAttention::sliding, 3, 2, 2);
    CHECK(mean_causal_keys(sliding, 8) == doctest::Approx(21.0 / 8.0));
    CHECK(mean_causal_keys(sliding, 2) == doctest::Approx(3.0 / 2.0));  // shorter than the window: plain causal
    CHECK(mean_decode_keys(sliding, 100) == 3);
    CHECK(mean_cached_tokens(sliding, 100) == 3);
    CHECK(mean_cached_tokens(sliding, 2) == 2);

    const ModelSpec chunked = windowed(LocalAttention::chunked, 3, 2, 2);
    CHECK(mean_causal_keys(chunked, 8) == doctest::Approx(15.0 / 8.0));
    // The 7th token opens the third chunk and sees itself; the 6th closes the second and sees 3.
    CHECK(mean_decode_keys(chunked, 7) == doctest::Approx(1.0));
    CHECK(mean_decode_keys(chunked, 6) == doctest::Approx(3.0));
    CHECK(mean_cached_tokens(chunked, 7) == 3);

    // One local layer of four: the others see everything.
    const ModelSpec mixed = windowed(LocalAttention::sliding, 3, 1, 4);
    CHECK(mean_causal_keys(mixed, 8) == doctest::Approx(0.25 * 21.0 / 8.0 + 0.75 * 9.0 / 2.0));
    CHECK(mean_decode_keys(mixed, 100) == doctest::Approx(0.25 * 3 + 0.75 * 100));
}

TEST_CASE("Mistral-7B-v0.1 at 32,768 tokens caches 32 x 8 x 128 x 2 x 2 bytes x 4,096 = 0.537 GB per sequence") {
    const double expected = 32.0 * 8 * 128 * 2 * 2 * 4096;
    const ModelSpec shipped = resolve_model("mistral-7b-v0.1", test::source_dir());
    const ModelSpec imported = resolve_model(test::data_file("hf/mistral-config.json").string(), test::source_dir());
    for (const ModelSpec& model : {shipped, imported}) {
        CHECK(kv_cache_bytes_per_sequence(model, 32768, Dtype::bf16) == expected);
        // Below the window, every token is cached.
        CHECK(kv_cache_bytes_per_sequence(model, 1000, Dtype::bf16) == 32.0 * 8 * 128 * 2 * 2 * 1000);
        // Attention FLOPs per token: 32 layers x 2 x 32 heads x (128 + 128) x mean keys, where the
        // first 4,096 queries see 1..4,096 keys and the other 28,672 see 4,096.
        const double mean_keys = (4096.0 * 4097.0 / 2.0 + 28672.0 * 4096.0) / 32768.0;
        CHECK(flops_per_token(model, 32768, true).attention_forward ==
              doctest::Approx(32.0 * 2 * 32 * 256 * mean_keys));
    }

    // serve: the same cache per sequence, and on one chip the batch's cache is batch times it.
    ServingSetup setup;
    setup.model = shipped;
    setup.strategy = resolve_strategy(kServingStrategy, test::source_dir());
    setup.hardware = resolve_hardware("h100", test::source_dir());
    setup.stack = default_stack(setup.hardware.chip, true, test::source_dir());
    setup.chips = 1;
    setup.batch_seqs = 8;
    setup.input_len = 32768 - 256;
    setup.output_len = 256;
    const ServingReport windowed_report = simulate_serving(build_serving_scenario(setup));
    CHECK(windowed_report.kv_cache_bytes_per_sequence == expected);
    CHECK(windowed_report.memory.kv_cache_bytes == 8 * expected);

    // Without its window the model caches 8x more, reads 8x more per decode step and fits fewer sequences.
    setup.model.window.reset();
    const ServingReport full = simulate_serving(build_serving_scenario(setup));
    CHECK(full.kv_cache_bytes_per_sequence == 8 * expected);
    CHECK(full.decode.time_s > windowed_report.decode.time_s);
    CHECK(full.max_batch_seqs < windowed_report.max_batch_seqs);
}

TEST_CASE("Gemma 2 9B windows every other layer: at 8,192 tokens 21 layers cache 8,192 tokens and 21 cache 4,096") {
    const ModelSpec gemma = resolve_model("gemma2-9b", test::source_dir());
    REQUIRE(gemma.window.has_value());
    CHECK(gemma.window->local_layers == 21);
    const double per_token_per_layer = 2.0 * 8 * 256 * 2;  // K and V, 8 KV heads of 256, bf16
    CHECK(kv_cache_bytes_per_sequence(gemma, 8192, Dtype::bf16) == per_token_per_layer * (21 * 8192.0 + 21 * 4096.0));
    // The matmuls do not depend on the window.
    ModelSpec global = gemma;
    global.window.reset();
    CHECK(flops_per_token(gemma, 8192, true).matmul_forward == flops_per_token(global, 8192, true).matmul_forward);
    CHECK(flops_per_token(gemma, 8192, true).attention_forward < flops_per_token(global, 8192, true).attention_forward);
}

TEST_CASE("Hugging Face configs: a window for every layer, per-layer kinds, and an unused Qwen window") {
    const ModelSpec mistral = load_hf_config(test::data_file("hf/mistral-config.json"));
    REQUIRE(mistral.window.has_value());
    CHECK(mistral.window->tokens == 4096);
    CHECK(mistral.window->local_layers == 32);
    CHECK(mistral.context_length == 32768);
    CHECK_FALSE(load_hf_config(test::data_file("hf/qwen2-config.json")).window.has_value());  // use_sliding_window false
    CHECK_FALSE(load_hf_config(test::data_file("hf/mixtral-config.json")).window.has_value());  // sliding_window null

    nlohmann::json config = test::read_json(test::data_file("hf/mistral-config.json"));
    config["num_hidden_layers"] = 4;
    config["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "sliding_attention"};
    const ModelSpec listed = load_hf_config(write_file("layer-types.json", config.dump()));
    REQUIRE(listed.window.has_value());
    CHECK(listed.window->local_layers == 3);

    config["layer_types"] = {"chunked_attention", "chunked_attention", "chunked_attention", "full_attention"};
    config["attention_chunk_size"] = 8192;
    const ModelSpec chunked = load_hf_config(write_file("chunked.json", config.dump()));
    REQUIRE(chunked.window.has_value());
    CHECK(chunked.window->kind == LocalAttention::chunked);
    CHECK(chunked.window->tokens == 8192);
    CHECK(chunked.window->local_layers == 3);

    config["layer_types"] = {"sliding_attention", "linear_attention", "full_attention", "full_attention"};
    CHECK(test::model_refusal(write_file("unknown-kind.json", config.dump()), "layer_types").find("linear_attention") != std::string::npos);
    config["layer_types"] = {"full_attention"};
    (void)test::model_refusal(write_file("short-kinds.json", config.dump()), "layer_types");
    config.erase("layer_types");
    config["sliding_window"] = 65536;  // above max_position_embeddings 32768
    CHECK(test::model_refusal(write_file("long-window.json", config.dump()), "sliding_window").find("longer than the model's context") !=
          std::string::npos);
}

TEST_CASE("model files: a window longer than the context, a zero window or every layer global is refused naming the field") {
    nlohmann::json file = test::read_json(test::source_dir() / "models" / "gemma2-9b.json");
    file["local_attention"]["tokens"] = 16384;  // context_length 8192
    (void)test::model_refusal(write_file("window-over-context.json", file.dump()), "local_attention.tokens");
    file["local_attention"]["tokens"] = 0;
    (void)test::model_refusal(write_file("zero-window.json", file.dump()), "local_attention.tokens");
    file["local_attention"]["tokens"] = 4096;
    file["local_attention"]["global_every"] = 1;
    (void)test::model_refusal(write_file("all-global.json", file.dump()), "local_attention.global_every");
    file["local_attention"]["global_every"] = 2;
    file["local_attention"]["kind"] = "dilated";
    (void)test::model_refusal(write_file("unknown-kind.json", file.dump()), "local_attention.kind");
}
