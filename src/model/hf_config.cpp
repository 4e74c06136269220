// Hugging Face config.json import. Field names follow transformers' configuration classes;
// unknown keys are expected there (configs carry many unrelated settings) and are ignored.
#include <algorithm>
#include <array>
#include <string_view>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/model_catalog.hpp"
#include "model/model_validation.hpp"

namespace ridgeline {

namespace {

constexpr std::array<std::string_view, 7> kSupportedTypes = {"llama", "mistral", "mixtral", "qwen2",
                                                             "qwen3", "qwen3_moe", "deepseek_v3"};

std::string supported_list() {
    std::string text;
    for (auto type : kSupportedTypes) text += (text.empty() ? "" : ", ") + std::string(type);
    return text;
}

void read_moe(const nlohmann::json& document, io::JsonObject& root, ModelSpec& model, const std::string& type) {
    MoeSpec moe;
    if (type == "mixtral") {
        moe.n_experts = root.positive_int("num_local_experts");
        moe.d_ff_expert = model.d_ff;
    } else if (type == "qwen3_moe") {
        moe.n_experts = root.positive_int("num_experts");
        moe.d_ff_expert = root.positive_int("moe_intermediate_size");
        if (root.non_negative_int("decoder_sparse_step", 1) != 1)
            root.fail("decoder_sparse_step", "only every-layer MoE (decoder_sparse_step 1) is supported");
        const auto dense_only = document.find("mlp_only_layers");
        if (dense_only != document.end() && dense_only->is_array() && !dense_only->empty())
            root.fail("mlp_only_layers", "dense-only layers inside a qwen3_moe model are not supported");
    } else {  // deepseek_v3
        moe.n_experts = root.positive_int("n_routed_experts");
        moe.d_ff_expert = root.positive_int("moe_intermediate_size");
        moe.n_shared_experts = root.non_negative_int("n_shared_experts", 0);
        moe.first_dense_layers = root.non_negative_int("first_k_dense_replace", 0);
        if (root.has("n_group") || root.has("topk_group")) {
            moe.routing_groups = root.positive_int("n_group");
            moe.routing_groups_per_token = root.positive_int("topk_group");
        }
        if (root.non_negative_int("moe_layer_freq", 1) != 1)
            root.fail("moe_layer_freq", "only moe_layer_freq 1 is supported");
    }
    moe.top_k = root.positive_int("num_experts_per_tok");
    model.moe = moe;
}

// Which layers attend locally. Newer configs list every layer's kind in `layer_types`; older
// ones give a window for all layers (Mistral) or for the layers from `max_window_layers` on (Qwen2).
void read_local_attention(const nlohmann::json& document, io::JsonObject& root, ModelSpec& model, const std::string& type,
                          ModelFieldNames& names) {
    AttentionWindow window;
    std::optional<std::int64_t> tokens = root.optional_positive_int("sliding_window");
    names.window = "sliding_window";
    const auto layer_types = document.find("layer_types");
    if (layer_types != document.end() && !layer_types->is_null()) {
        names.local_layers = "layer_types";
        std::int64_t sliding = 0, chunked = 0, index = 0;
        for (const std::string& kind : root.string_list("layer_types")) {
            if (kind == "sliding_attention") ++sliding;
            else if (kind == "chunked_attention") ++chunked;
            else if (kind != "full_attention")
                root.fail("layer_types", "layer " + std::to_string(index) + " is \"" + kind +
                                             "\"; known: full_attention, sliding_attention, chunked_attention");
            ++index;
        }
        if (index != model.n_layers)
            root.fail("layer_types", std::to_string(index) + " entries for " + std::to_string(model.n_layers) + " layers");
        if (sliding > 0 && chunked > 0) root.fail("layer_types", "sliding and chunked layers in one model are not supported");
        if (chunked > 0) {
            window.kind = LocalAttention::chunked;
            tokens = root.optional_positive_int("attention_chunk_size");
            names.window = "attention_chunk_size";
        }
        window.local_layers = sliding + chunked;
        if (window.local_layers == 0) return;
        if (!tokens) root.fail(names.window, "missing, but layer_types names local layers");
    } else {
        const bool qwen = type.starts_with("qwen");
        if (qwen && !root.boolean("use_sliding_window", false)) return;  // Qwen configs carry an unused window
        if (!tokens) return;
        window.local_layers = model.n_layers;
        if (qwen) {
            names.local_layers = "max_window_layers";
            window.local_layers -= std::min(model.n_layers, root.non_negative_int("max_window_layers", 0));
        }
        if (window.local_layers == 0) return;
    }
    window.tokens = *tokens;
    model.window = window;
}

}  // namespace

ModelSpec load_hf_config(const std::filesystem::path& path) {
    const nlohmann::json document = io::parse_json_file(path);
    io::JsonObject root(document, path.string());
    if (!root.has("model_type"))
        root.fail("model_type", "missing; this is neither a Ridgeline model file (no \"format\") nor a Hugging Face config.json");
    const std::string type = root.string("model_type");
    bool supported = false;
    for (auto known : kSupportedTypes) supported = supported || type == known;
    if (!supported)
        root.fail("model_type", "unsupported architecture \"" + type + "\" (supported: " + supported_list() + ")");

    ModelSpec model;
    const auto hub_name = root.optional_string("_name_or_path");
    model.name = hub_name && !hub_name->empty() ? *hub_name : path.parent_path().filename().string();
    if (model.name.empty()) model.name = path.stem().string();
    model.description = "imported from Hugging Face config.json (model_type " + type + ")";
    model.n_layers = root.positive_int("num_hidden_layers");
    model.d_model = root.positive_int("hidden_size");
    model.n_heads = root.positive_int("num_attention_heads");
    model.n_kv_heads = root.optional_positive_int("num_key_value_heads").value_or(model.n_heads);
    if (auto head_dim = root.optional_positive_int("head_dim")) {
        model.head_dim = *head_dim;
    } else {
        if (model.d_model % model.n_heads != 0)
            root.fail("num_attention_heads", std::to_string(model.n_heads) + " heads do not divide hidden_size " +
                                                 std::to_string(model.d_model) + " and no head_dim is given");
        model.head_dim = model.d_model / model.n_heads;
    }
    model.d_ff = root.positive_int("intermediate_size");
    model.vocab_size = root.positive_int("vocab_size");
    model.mlp = MlpKind::gated;  // every supported family uses a SwiGLU MLP
    model.norm = NormKind::rmsnorm;
    model.tied_embeddings = root.boolean("tie_word_embeddings", false);
    model.qkv_bias = type == "qwen2" || root.boolean("attention_bias", false);
    model.qk_norm = type == "qwen3" || type == "qwen3_moe";
    if (type == "mixtral" || type == "qwen3_moe" || type == "deepseek_v3") read_moe(document, root, model, type);
    if (type == "deepseek_v3") {
        MlaSpec mla;
        mla.q_lora_rank = root.non_negative_int("q_lora_rank", 0);
        mla.kv_lora_rank = root.positive_int("kv_lora_rank");
        mla.qk_nope_head_dim = root.positive_int("qk_nope_head_dim");
        mla.qk_rope_head_dim = root.positive_int("qk_rope_head_dim");
        mla.v_head_dim = root.positive_int("v_head_dim");
        model.mla = mla;
    }
    model.context_length = root.non_negative_int("max_position_embeddings", 0);
    model.mtp_depth = root.non_negative_int("num_nextn_predict_layers", 0);
    ModelFieldNames names;
    read_local_attention(document, root, model, type, names);
    names.n_heads = "num_attention_heads";
    names.n_kv_heads = "num_key_value_heads";
    names.top_k = "num_experts_per_tok";
    names.first_dense_layers = "first_k_dense_replace";
    names.routing_groups = "n_group";
    names.routing_groups_per_token = "topk_group";
    validate_model(model, path.string(), names);
    return model;
}

}  // namespace ridgeline
