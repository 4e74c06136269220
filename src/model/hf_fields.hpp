#pragma once
// What the Hugging Face importer (model/hf_config.cpp, the only file that includes this) knows
// about config.json: the families it reads and what each one's fields mean, the keys it may pass
// over because they change nothing the cost model counts (token ids, dropout, initialisation,
// epsilons, rotary settings, generation defaults, bookkeeping), and a reader that refuses every
// other key it did not read, naming it: an architecture field the importer does not understand is
// never silently ignored.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_reader.hpp"

namespace ridgeline::hf {

// Keys transformers' PretrainedConfig and the supported families carry that change no parameter,
// FLOP or byte the model counts.
inline constexpr std::array<std::string_view, 66> kInertKeys = {
    // bookkeeping
    "architectures", "auto_map", "transformers_version", "torch_dtype", "dtype", "_commit_hash",
    "_attn_implementation", "_attn_implementation_autoset", "use_cache", "use_bfloat16", "return_dict",
    "output_attentions", "output_hidden_states", "torchscript", "tf_legacy_loss", "id2label", "label2id",
    "problem_type", "tokenizer_class", "task_specific_params", "finetuning_task", "prefix", "pruned_heads",
    "chunk_size_feed_forward", "cache_implementation", "for_llm_compressor", "unsloth_fixed", "ep_size",
    // initialisation and numerics
    "initializer_range", "rms_norm_eps", "layer_norm_eps", "pretraining_tp",
    // activation function: every supported family has a gated MLP, whatever its nonlinearity
    "hidden_act", "hidden_activation",
    // positions (rotary embedding settings; the context length is read from max_position_embeddings)
    "original_max_position_embeddings", "initial_context_length", "partial_rotary_factor",
    // attention scaling constants
    "query_pre_attn_scalar",
    // router training and routing arithmetic (the experts chosen per token are num_experts_per_tok)
    "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "aux_loss_alpha", "seq_aux",
    "norm_topk_prob", "routed_scaling_factor", "scoring_func",
    // generation defaults
    "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
    "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty", "length_penalty",
    "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences",
    "output_scores", "return_dict_in_generate", "remove_invalid_values"};

// Key families recognised by their ending or beginning: token ids (bos_token_id, image_token_index),
// dropout probabilities (attention_dropout, resid_pdrop), and rotary settings (rope_theta,
// rope_scaling, rope_parameters, rope_local_base_freq).
inline bool is_inert_key(std::string_view key) {
    if (std::find(kInertKeys.begin(), kInertKeys.end(), key) != kInertKeys.end()) return true;
    for (std::string_view suffix : {"_token_id", "_token_ids", "_token_index", "_dropout", "_pdrop"})
        if (key.ends_with(suffix)) return true;
    return key.starts_with("rope_");
}

// Which layers attend locally when the config does not list them in `layer_types`.
enum class WindowRule {
    none,         // no local attention: window keys are not understood
    every_layer,  // sliding_window applies to every layer (Mistral, Mixtral, Phi-3)
    qwen,         // use_sliding_window, from layer max_window_layers on (Qwen2/3)
    alternate,    // even-indexed layers slide (Gemma 2, gpt-oss)
    pattern,      // layer i is global when (i + 1) % sliding_window_pattern == 0 (Gemma 3)
    nope_chunked  // layers that use RoPE attend within chunks, the NoPE ones globally (Llama 4)
};
enum class QkNorm { none, always, rms_flag, l2_flag };  // l2: weightless (Llama 4)

// How a family names and places its experts.
enum class MoeLayout {
    none,      // dense
    every,     // every layer, experts as wide as intermediate_size (Mixtral, gpt-oss)
    qwen,      // moe_intermediate_size; decoder_sparse_step, mlp_only_layers
    deepseek,  // moe_intermediate_size, shared experts; first_k_dense_replace, moe_layer_freq; groups
    glm,       // moe_intermediate_size, shared experts; first_k_dense_replace; groups
    llama4     // one shared expert; dense layers intermediate_size_mlp wide; interleave_moe_layer_step, moe_layers
};

struct Family {
    std::string_view type;          // model_type
    std::string_view architecture = {};  // transformers class in `architectures`
    std::string_view reads_as = {};      // the family read instead ("" when this one)
    bool tied_default = false;      // transformers' default for tie_word_embeddings
    WindowRule window = WindowRule::none;
    QkNorm qk_norm = QkNorm::none;
    bool qkv_bias = false;          // q/k/v biases whatever attention_bias says (Qwen2)
    MoeLayout moe = MoeLayout::none;
    std::string_view experts_key = {};   // the routed-expert count
    bool mla = false;               // multi-head latent attention
    bool mtp = false;               // may have multi-token prediction layers
    bool gemma = false;             // four norms per layer, logit soft-capping
    bool gpt_oss = false;           // biases on every projection, attention sinks, clamped SwiGLU
};

inline constexpr std::array<Family, 16> kFamilies = {{
    {.type = "llama", .architecture = "LlamaForCausalLM"},
    {.type = "mistral", .architecture = "MistralForCausalLM", .window = WindowRule::every_layer},
    {.type = "mixtral", .architecture = "MixtralForCausalLM", .window = WindowRule::every_layer, .moe = MoeLayout::every,
     .experts_key = "num_local_experts"},
    {.type = "qwen2", .architecture = "Qwen2ForCausalLM", .window = WindowRule::qwen, .qkv_bias = true},
    {.type = "qwen3", .architecture = "Qwen3ForCausalLM", .window = WindowRule::qwen, .qk_norm = QkNorm::always},
    {.type = "qwen3_moe", .architecture = "Qwen3MoeForCausalLM", .window = WindowRule::qwen, .qk_norm = QkNorm::always,
     .moe = MoeLayout::qwen, .experts_key = "num_experts"},
    {.type = "gemma2", .architecture = "Gemma2ForCausalLM", .tied_default = true, .window = WindowRule::alternate, .gemma = true},
    {.type = "gemma3_text", .architecture = "Gemma3ForCausalLM", .tied_default = true, .window = WindowRule::pattern,
     .qk_norm = QkNorm::always, .gemma = true},
    {.type = "phi3", .architecture = "Phi3ForCausalLM", .window = WindowRule::every_layer},
    {.type = "gpt_oss", .architecture = "GptOssForCausalLM", .window = WindowRule::alternate, .moe = MoeLayout::every,
     .experts_key = "num_local_experts", .gpt_oss = true},
    {.type = "deepseek_v2", .architecture = "DeepseekV2ForCausalLM", .moe = MoeLayout::deepseek, .experts_key = "n_routed_experts",
     .mla = true},
    {.type = "deepseek_v3", .architecture = "DeepseekV3ForCausalLM", .moe = MoeLayout::deepseek, .experts_key = "n_routed_experts",
     .mla = true, .mtp = true},
    // Kimi K2 is DeepSeek-V3's architecture under its own model_type (its architectures says so).
    {.type = "kimi_k2", .reads_as = "deepseek_v3"},
    {.type = "glm4_moe", .architecture = "Glm4MoeForCausalLM", .qk_norm = QkNorm::rms_flag, .moe = MoeLayout::glm,
     .experts_key = "n_routed_experts", .mtp = true},
    {.type = "llama4_text", .architecture = "Llama4ForCausalLM", .window = WindowRule::nope_chunked, .qk_norm = QkNorm::l2_flag,
     .moe = MoeLayout::llama4, .experts_key = "num_local_experts"},
    // Llama 4's released configs put the language model under text_config (see load_hf_config).
    {.type = "llama4", .architecture = "Llama4ForConditionalGeneration", .reads_as = "llama4_text"},
}};

inline const Family* family_named(std::string_view type) {
    for (const Family& family : kFamilies)
        if (family.type == type) return &family;
    return nullptr;
}

inline std::string supported_list() {
    std::string text;
    for (const Family& family : kFamilies) text += (text.empty() ? "" : ", ") + std::string(family.type);
    return text;
}

// One config object (the file, or Llama 4's text_config) being read: every key read is marked as
// understood, and the rest are refused at the end unless known not to change the architecture.
class Config {
public:
    Config(const nlohmann::json& document, const std::string& origin, const std::string& path)
        : document_(document), object_(document, origin, path), prefix_(path.empty() ? "" : path + ".") {}

    [[nodiscard]] bool present(const std::string& key) const {
        const auto it = document_.find(key);
        return it != document_.end() && !it->is_null();
    }
    [[nodiscard]] bool contains(const std::string& key) const { return document_.contains(key); }
    [[nodiscard]] const nlohmann::json& value(const std::string& key) const { return document_.at(key); }
    // Marks a key understood and returns the reader for it.
    io::JsonObject& read(const std::string& key) {
        understood_.insert(key);
        return object_;
    }
    void understand(const std::string& key) { understood_.insert(key); }
    [[noreturn]] void fail(const std::string& key, const std::string& what) const { object_.fail(key, what); }
    [[nodiscard]] std::string name(const std::string& key) const { return prefix_ + key; }

    std::int64_t positive(const std::string& key) { return read(key).positive_int(key); }
    std::optional<std::int64_t> optional_positive(const std::string& key) { return read(key).optional_positive_int(key); }
    std::int64_t count(const std::string& key, std::int64_t fallback) { return read(key).non_negative_int(key, fallback); }
    bool flag(const std::string& key, bool fallback) {
        understand(key);
        return present(key) ? object_.boolean(key, fallback) : fallback;
    }
    std::optional<double> optional_number(const std::string& key) {
        understand(key);
        if (!present(key)) return std::nullopt;
        return object_.non_negative_number(key);
    }
    std::vector<std::string> strings(const std::string& key) { return read(key).string_list(key); }
    // Layer indices or 0/1 flags: whole numbers >= 0.
    std::vector<std::int64_t> indices(const std::string& key) {
        understand(key);
        const nlohmann::json& list = document_.at(key);
        if (!list.is_array()) fail(key, "expected an array of whole numbers");
        std::vector<std::int64_t> result;
        for (const auto& item : list) {
            if (!item.is_number_integer() || item.get<std::int64_t>() < 0) fail(key, "expected whole numbers >= 0, found " + item.dump());
            result.push_back(item.get<std::int64_t>());
        }
        return result;
    }

    // Refuses the first key neither read nor known to leave the architecture as counted. A null
    // value sets nothing and passes.
    void refuse_unread(std::string_view family) const {
        for (const auto& item : document_.items()) {
            if (understood_.count(item.key()) || item.value().is_null() || hf::is_inert_key(item.key())) continue;
            fail(item.key(), "not understood by the " + std::string(family) +
                                 " importer; it may change the architecture, so the config is refused rather than the field ignored");
        }
    }

private:
    const nlohmann::json& document_;
    io::JsonObject object_;
    std::string prefix_;
    std::set<std::string> understood_;
};

// What the description says the cost model leaves out.
using Notes = std::vector<std::string>;

}  // namespace ridgeline::hf
