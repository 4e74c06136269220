#pragma once
// How a Hugging Face config lays out its layers: which are MoE (and with how many experts), which
// use latent attention, and which attend locally. Included only by model/hf_config.cpp.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/hf_fields.hpp"
#include "model/model_spec.hpp"
#include "model/model_validation.hpp"

namespace ridgeline::hf {

// After first_dense dense layers, every step-th layer is MoE: the (first_dense, step) that gives
// exactly these MoE layers, if any does.
inline std::optional<std::pair<std::int64_t, std::int64_t>> fit_layout(const std::vector<bool>& is_moe) {
    std::vector<std::int64_t> moe;
    for (std::size_t i = 0; i < is_moe.size(); ++i)
        if (is_moe[i]) moe.push_back(static_cast<std::int64_t>(i));
    if (moe.empty()) return std::nullopt;
    const auto n = static_cast<std::int64_t>(is_moe.size());
    const std::int64_t step = moe.size() > 1 ? moe[1] - moe[0] : n - moe[0];
    const std::int64_t first = moe[0] - (step - 1);
    if (first < 0) return std::nullopt;
    for (std::int64_t i = 0; i < n; ++i)
        if (is_moe[i] != (i >= first && (i - first + 1) % step == 0)) return std::nullopt;
    return std::pair{first, step};
}

inline void read_moe(Config& c, const Family& family, ModelSpec& model, ModelFieldNames& names) {
    const MoeLayout layout = family.moe;
    const std::string experts_key(family.experts_key);
    // DeepSeek-style configs without routed experts (null) are dense; the others must have them.
    if (!c.present(experts_key)) {
        if (layout != MoeLayout::deepseek) (void)c.positive(experts_key);
        for (const char* key : {"n_routed_experts", "n_shared_experts", "num_experts_per_tok", "moe_intermediate_size", "first_k_dense_replace",
                                "moe_layer_freq", "n_group", "topk_group", "topk_method"})
            c.understand(key);  // settings of experts the model does not have
        return;
    }
    MoeSpec moe;
    moe.n_experts = c.positive(experts_key);
    moe.top_k = c.positive("num_experts_per_tok");
    if (family.gpt_oss && c.present("experts_per_token") && c.positive("experts_per_token") != moe.top_k)
        c.fail("experts_per_token", "disagrees with num_experts_per_tok");
    const bool deepseek_like = layout == MoeLayout::deepseek || layout == MoeLayout::glm;
    if (layout == MoeLayout::qwen || deepseek_like) moe.d_ff_expert = c.positive("moe_intermediate_size");
    else moe.d_ff_expert = model.d_ff;  // Mixtral, gpt-oss and Llama 4 experts are intermediate_size wide
    if (deepseek_like) moe.n_shared_experts = c.count("n_shared_experts", 0);
    if (layout == MoeLayout::llama4) {
        moe.n_shared_experts = 1;
        if (c.present("intermediate_size_mlp")) model.d_ff = c.positive("intermediate_size_mlp");
    }

    // Which layers are MoE, by the family's rule over whichever of its layout fields are given.
    const std::int64_t n = model.n_layers;
    std::int64_t first_dense = 0, frequency = 1, sparse_step = 1, interleave = 1;
    std::set<std::int64_t> dense_only, listed;
    bool has_list = false;
    std::string layout_key = "num_hidden_layers";
    const auto given = [&](const char* key) {
        if (!c.present(key)) return false;
        layout_key = key;
        return true;
    };
    // transformers' default differs by family (DeepSeek-V2: 0, V3: 3, GLM-4.5: 1), so it must be given.
    if (deepseek_like) first_dense = given("first_k_dense_replace") ? c.count("first_k_dense_replace", 0) : c.positive("first_k_dense_replace");
    if (first_dense >= n)
        c.fail("first_k_dense_replace", std::to_string(first_dense) + " leading dense layers leave no MoE layer of " + std::to_string(n));
    if (layout == MoeLayout::deepseek && given("moe_layer_freq")) frequency = c.positive("moe_layer_freq");  // i % freq == 0
    if (layout == MoeLayout::qwen) {
        if (given("decoder_sparse_step")) sparse_step = c.positive("decoder_sparse_step");  // (i + 1) % step == 0
        if (given("mlp_only_layers"))
            for (std::int64_t i : c.indices("mlp_only_layers")) dense_only.insert(i);
    }
    if (layout == MoeLayout::llama4) {
        if (given("interleave_moe_layer_step")) interleave = c.positive("interleave_moe_layer_step");  // (i + 1) % step == 0
        if ((has_list = given("moe_layers")))
            for (std::int64_t i : c.indices("moe_layers")) listed.insert(i);
    }
    for (const auto* set : {&dense_only, &listed})
        for (std::int64_t i : *set)
            if (i >= n) c.fail(set == &listed ? "moe_layers" : "mlp_only_layers", "layer " + std::to_string(i) + " of " + std::to_string(n));
    std::vector<bool> is_moe(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        is_moe[static_cast<std::size_t>(i)] = i >= first_dense && i % frequency == 0 && (i + 1) % sparse_step == 0 &&
                                              !dense_only.count(i) && (has_list ? listed.count(i) > 0 : (i + 1) % interleave == 0);
    const auto fitted = fit_layout(is_moe);
    if (!fitted)
        c.fail(layout_key, "the MoE layers it gives are not some leading dense layers followed by every k-th layer MoE, "
                           "the only layouts the cost model represents");
    moe.first_dense_layers = fitted->first;
    moe.layer_step = fitted->second;
    names.layer_step = c.name(layout_key);
    names.first_dense_layers = c.name(layout_key);

    // Group-limited routing (DeepSeek-V2/V3): experts in n_group groups, a token's top-k drawn from
    // topk_group of them. One group limits nothing.
    if (deepseek_like) {
        const std::int64_t groups = c.count("n_group", 0);
        c.understand("topk_method");
        if (groups > 1) {
            moe.routing_groups = groups;
            moe.routing_groups_per_token = c.positive("topk_group");
        } else if (c.count("topk_group", 0) > 1) {
            c.fail("topk_group", "more than one group per token of " + std::to_string(std::max<std::int64_t>(groups, 1)));
        }
    }
    model.moe = moe;
    names.top_k = c.name("num_experts_per_tok");
    names.routing_groups = c.name("n_group");
    names.routing_groups_per_token = c.name("topk_group");
}

inline void read_mla(Config& c, ModelSpec& model) {
    MlaSpec mla;
    mla.q_lora_rank = c.count("q_lora_rank", 0);  // null: queries projected directly (DeepSeek-V2-Lite)
    mla.kv_lora_rank = c.positive("kv_lora_rank");
    mla.qk_nope_head_dim = c.positive("qk_nope_head_dim");
    mla.qk_rope_head_dim = c.positive("qk_rope_head_dim");
    mla.v_head_dim = c.positive("v_head_dim");
    model.mla = mla;
}

// Which layers attend locally: `layer_types` where given, else the family's rule.
inline void read_window(Config& c, const Family& family, ModelSpec& model, Notes& notes, ModelFieldNames& names) {
    if (family.window == WindowRule::none) return;
    const std::int64_t n = model.n_layers;
    AttentionWindow window;
    std::optional<std::int64_t> tokens;
    names.window = c.name("sliding_window");
    if (family.window == WindowRule::qwen) {  // read either way: layer_types, where given, decides
        c.understand("use_sliding_window");
        c.understand("max_window_layers");
    }
    if (c.present("layer_types")) {
        names.local_layers = c.name("layer_types");
        std::int64_t sliding = 0, chunked = 0, index = 0;
        for (const std::string& kind : c.strings("layer_types")) {
            if (kind == "sliding_attention") ++sliding;
            else if (kind == "chunked_attention") ++chunked;
            else if (kind != "full_attention")
                c.fail("layer_types", "layer " + std::to_string(index) + " is \"" + kind + "\"; known: full_attention, sliding_attention, chunked_attention");
            ++index;
        }
        if (index != n) c.fail("layer_types", std::to_string(index) + " entries for " + std::to_string(n) + " layers");
        if (sliding > 0 && chunked > 0) c.fail("layer_types", "sliding and chunked layers in one model are not supported");
        if (family.window == WindowRule::pattern) {
            c.understand("sliding_window_pattern");
            c.understand("_sliding_window_pattern");
        }
        if (family.window == WindowRule::nope_chunked) {
            c.understand("no_rope_layers");
            c.understand("no_rope_layer_interval");
        }
        if (chunked > 0) {
            window.kind = LocalAttention::chunked;
            names.window = c.name("attention_chunk_size");
            tokens = c.optional_positive("attention_chunk_size");
            c.understand("sliding_window");  // no layer slides
        } else {
            tokens = c.optional_positive("sliding_window");
            c.understand("attention_chunk_size");
        }
        window.local_layers = sliding + chunked;
        if (window.local_layers == 0) return;
        if (!tokens) c.fail(chunked > 0 ? "attention_chunk_size" : "sliding_window", "missing, but layer_types names local layers");
    } else {
        switch (family.window) {
            case WindowRule::every_layer:
                tokens = c.optional_positive("sliding_window");
                window.local_layers = n;
                // Phi-3's long-context configs give a window twice their context: it masks nothing.
                if (const std::int64_t context = c.count("max_position_embeddings", 0);
                    family.type == "phi3" && tokens && context > 0 && *tokens >= context) {
                    notes.push_back("sliding_window " + std::to_string(*tokens) + " is not shorter than the context, so every layer attends globally");
                    return;
                }
                break;
            case WindowRule::qwen:
                tokens = c.optional_positive("sliding_window");
                if (!c.flag("use_sliding_window", false)) return;  // Qwen configs carry an unused window
                names.local_layers = c.name("max_window_layers");
                window.local_layers = n - std::min(n, c.count("max_window_layers", 0));
                break;
            case WindowRule::alternate:
                // transformers' default when the config does not list layer_types (gpt-oss: 128).
                tokens = c.present("sliding_window") ? c.optional_positive("sliding_window")
                                                    : std::optional<std::int64_t>(family.gemma ? 4096 : 128);
                window.local_layers = (n + 1) / 2;
                break;
            case WindowRule::pattern: {
                tokens = c.present("sliding_window") ? c.optional_positive("sliding_window") : std::optional<std::int64_t>(4096);
                // Newer transformers save it as _sliding_window_pattern.
                const char* key = c.present("sliding_window_pattern") ? "sliding_window_pattern" : "_sliding_window_pattern";
                const std::int64_t every = c.present(key) ? c.positive(key) : 6;
                names.local_layers = c.name(key);
                window.local_layers = n - n / every;
                break;
            }
            case WindowRule::nope_chunked: {
                window.kind = LocalAttention::chunked;
                names.window = c.name("attention_chunk_size");
                // Absent: transformers' default of 8192; null: no chunking.
                if (c.present("attention_chunk_size")) tokens = c.positive("attention_chunk_size");
                else if (!c.contains("attention_chunk_size")) tokens = 8192;
                c.understand("attention_chunk_size");
                // A layer with RoPE (flag 1) attends within its chunk; every no_rope_layer_interval-th is NoPE and global.
                const std::int64_t interval = c.present("no_rope_layer_interval") ? c.positive("no_rope_layer_interval") : 4;
                std::vector<std::int64_t> rope;
                if (c.present("no_rope_layers")) rope = c.indices("no_rope_layers");
                names.local_layers = c.name(rope.empty() ? "no_rope_layer_interval" : "no_rope_layers");
                if (rope.empty())
                    for (std::int64_t i = 0; i < n; ++i) rope.push_back((i + 1) % interval != 0 ? 1 : 0);
                if (static_cast<std::int64_t>(rope.size()) != n)
                    c.fail("no_rope_layers", std::to_string(rope.size()) + " entries for " + std::to_string(n) + " layers");
                window.local_layers = static_cast<std::int64_t>(std::count_if(rope.begin(), rope.end(), [](std::int64_t flag) { return flag != 0; }));
                break;
            }
            case WindowRule::none: return;
        }
        if (!tokens || window.local_layers == 0) return;
    }
    window.tokens = *tokens;
    model.window = window;
}

}  // namespace ridgeline::hf
