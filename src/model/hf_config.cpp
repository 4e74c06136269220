// Hugging Face config.json import. A config names its family in model_type (or, for a family
// published under another name such as Kimi K2, in `architectures`); the family says what its
// fields mean and what transformers assumes when one is absent, and the fields present say what the
// model has: experts, latent attention, local attention, biases, norms, prediction layers
// (model/hf_layouts.hpp reads the layer layouts). Every key is read, known not to change what the
// cost model counts (model/hf_fields.hpp), or refused naming it: an architecture field the
// importer does not understand is never silently ignored. What the cost model leaves out (sinks,
// soft-capping, extra norms, a vision encoder) is named in the imported model's description.
#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/hf_fields.hpp"
#include "model/hf_layouts.hpp"
#include "model/model_catalog.hpp"
#include "model/model_validation.hpp"

namespace ridgeline {

namespace {

using namespace hf;

std::string number_text(double value) {
    std::ostringstream text;
    text << value;
    return text.str();
}

// The checkpoint's storage format, where the config gives one.
void note_quantization(Config& c, Notes& notes) {
    c.understand("quantization_config");
    if (!c.present("quantization_config")) return;
    const nlohmann::json& quant = c.value("quantization_config");
    const auto method = quant.is_object() ? quant.find("quant_method") : quant.end();
    notes.push_back("the checkpoint stores weights as " +
                    (method != quant.end() && method->is_string() ? method->get<std::string>() : std::string("quantized")) +
                    " (the weights dtype is a choice of the serve command)");
}

constexpr std::int64_t kMaxLayers = 100000;

// Fields that change the architecture in ways the cost model leaves out, named in the description.
void read_uncosted(Config& c, const Family& family, const ModelSpec& model, Notes& notes) {
    if (family.gemma) {
        if (c.flag("use_bidirectional_attention", false))
            c.fail("use_bidirectional_attention", "bidirectional (non-causal) attention is not modelled");
        if (c.present("sliding_window_size") && (!model.window || c.positive("sliding_window_size") != model.window->tokens))
            c.fail("sliding_window_size", "disagrees with sliding_window");
        c.understand("sliding_window_size");
        std::string caps;
        for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"})
            if (const auto cap = c.optional_number(key)) caps += (caps.empty() ? "" : ", ") + std::string(key) + " " + number_text(*cap);
        if (!caps.empty()) notes.push_back("logit soft-capping (" + caps + ")");
        notes.push_back("the post-attention and post-feedforward RMSNorms (2 x d_model per layer)");
    }
    if (family.gpt_oss) {
        if (const auto limit = c.optional_number("swiglu_limit")) notes.push_back("the SwiGLU clamp (swiglu_limit " + number_text(*limit) + ")");
        notes.push_back("the learned attention sinks (one scalar per head per layer) and the router's bias");
    }
    if (family.qk_norm == QkNorm::l2_flag) {
        for (const char* key : {"attn_temperature_tuning", "attn_scale", "floor_scale"}) c.understand(key);
        if (c.present("attn_temperature_tuning")) notes.push_back("the NoPE layers' attention temperature tuning (elementwise)");
    }
    if ((family.moe == MoeLayout::deepseek || family.moe == MoeLayout::glm) && model.moe)
        notes.push_back("the router's score-correction bias (one per expert per layer)");
}

// A ModelSpec from the config object of one family: `c` is the file, or Llama 4's text_config.
void read_architecture(Config& c, const Family& family, ModelSpec& model, Notes& notes, ModelFieldNames& names) {
    model.n_layers = c.positive("num_hidden_layers");
    if (model.n_layers > kMaxLayers) c.fail("num_hidden_layers", std::to_string(model.n_layers) + " layers is not a plausible model");
    model.d_model = c.positive("hidden_size");
    model.n_heads = c.positive("num_attention_heads");
    model.n_kv_heads = c.optional_positive("num_key_value_heads").value_or(model.n_heads);
    if (auto head_dim = c.optional_positive("head_dim")) {
        model.head_dim = *head_dim;
    } else {
        if (model.d_model % model.n_heads != 0)
            c.fail("num_attention_heads", std::to_string(model.n_heads) + " heads do not divide hidden_size " +
                                              std::to_string(model.d_model) + " and no head_dim is given");
        model.head_dim = model.d_model / model.n_heads;
    }
    model.d_ff = c.positive("intermediate_size");
    model.vocab_size = c.positive("vocab_size");
    model.mlp = MlpKind::gated;  // every supported family has a gated (GLU) MLP
    model.norm = NormKind::rmsnorm;
    model.tied_embeddings = c.flag("tie_word_embeddings", family.tied_default);
    model.context_length = c.present("max_position_embeddings") ? c.positive("max_position_embeddings") : 0;

    // Biases. attention_bias puts them on q, k and v (and, in Llama-style code, on o: d_model more
    // per layer, not counted); gpt-oss has them on every attention and expert projection.
    const bool attention_bias = c.flag("attention_bias", family.gpt_oss);
    if (family.gpt_oss) {
        if (!attention_bias) c.fail("attention_bias", "gpt-oss is released with attention biases; false is not supported");
        model.linear_bias = true;
    } else if (c.flag("mlp_bias", false)) {
        if (!attention_bias) c.fail("mlp_bias", "biases on the MLP without biases on attention are not representable");
        model.linear_bias = true;
    } else {
        model.qkv_bias = family.qkv_bias || attention_bias;
    }

    switch (family.qk_norm) {
        case QkNorm::none: break;
        case QkNorm::always: model.qk_norm = true; break;
        case QkNorm::rms_flag: model.qk_norm = c.flag("use_qk_norm", false); break;
        case QkNorm::l2_flag:
            if (c.flag("use_qk_norm", true)) notes.push_back("the weightless L2 norm of q and k");
            break;
    }
    if (family.mla) read_mla(c, model);
    if (family.moe != MoeLayout::none) read_moe(c, family, model, names);
    if (family.mtp) model.mtp_depth = c.count("num_nextn_predict_layers", 0);
    read_window(c, family, model, notes, names);
    read_uncosted(c, family, model, notes);
    // Errors name the config's own keys.
    using Name = std::string ModelFieldNames::*;
    for (const auto& [name, key] : {std::pair<Name, const char*>{&ModelFieldNames::n_heads, "num_attention_heads"},
                                    {&ModelFieldNames::n_kv_heads, "num_key_value_heads"},
                                    {&ModelFieldNames::n_layers, "num_hidden_layers"}, {&ModelFieldNames::d_model, "hidden_size"},
                                    {&ModelFieldNames::d_ff, "intermediate_size"}, {&ModelFieldNames::vocab_size, "vocab_size"},
                                    {&ModelFieldNames::mtp_depth, "num_nextn_predict_layers"}})
        names.*name = c.name(key);
}

std::string describe(const ModelSpec& model, const std::string& type, const Family& family, const Notes& notes) {
    const auto text = [](std::int64_t value) { return std::to_string(value); };
    std::string what = "imported from Hugging Face config.json (model_type " + type;
    if (type != family.type) what += ", read as the " + std::string(family.type) + " architecture";
    what += "): " + text(model.n_layers) + " layers";
    if (model.mla) what += ", multi-head latent attention";
    else if (model.n_kv_heads < model.n_heads) what += ", GQA " + text(model.n_heads) + "/" + text(model.n_kv_heads) + " heads";
    if (model.moe) {
        const MoeSpec& moe = *model.moe;
        what += ", MoE " + text(moe.n_experts) + " experts top-" + text(moe.top_k);
        if (moe.n_shared_experts > 0) what += " + " + text(moe.n_shared_experts) + " shared";
        if (moe.first_dense_layers > 0)
            what += " after " + text(moe.first_dense_layers) + (moe.first_dense_layers == 1 ? " dense layer" : " dense layers");
        if (moe.layer_step > 1) what += ", one layer in " + text(moe.layer_step) + " MoE and the others dense";
    }
    if (model.window)
        what += std::string(model.window->kind == LocalAttention::chunked ? ", chunked attention (" : ", sliding-window attention (") +
                text(model.window->tokens) + " tokens) in " + text(model.window->local_layers) + " of " + text(model.n_layers) + " layers";
    if (model.mtp_depth > 0) what += ", " + text(model.mtp_depth) + (model.mtp_depth == 1 ? " multi-token prediction layer" : " multi-token prediction layers");
    if (!notes.empty()) {
        what += ". Not costed:";
        for (std::size_t i = 0; i < notes.size(); ++i) what += (i == 0 ? " " : "; ") + notes[i];
    }
    return what;
}

// The name reports use: _name_or_path, else the file's name, or for a file called config.json its
// folder's (a Hugging Face cache snapshot's repository).
std::string model_name(const std::optional<std::string>& hub_name, const std::filesystem::path& path) {
    if (hub_name && !hub_name->empty()) return *hub_name;
    if (path.stem() != "config") return path.stem().string();
    const std::filesystem::path folder = path.parent_path();
    const std::string repo = folder.parent_path().parent_path().filename().string();  // models--org--name/snapshots/<hash>
    if (folder.parent_path().filename() == "snapshots" && repo.starts_with("models--")) {
        std::string name = repo.substr(8);
        if (const auto at = name.find("--"); at != std::string::npos) name.replace(at, 2, "/");
        return name;
    }
    return folder.filename().empty() ? "config" : folder.filename().string();
}

}  // namespace

ModelSpec load_hf_config(const std::filesystem::path& path) {
    const nlohmann::json document = io::parse_json_file(path);
    Config root(document, path.string(), "");
    io::JsonObject& top = root.read("model_type");
    if (!top.has("model_type"))
        root.fail("model_type", "missing; this is neither a Ridgeline model file (no \"schema\") nor a Hugging Face config.json");
    const std::string type = top.string("model_type");
    const Family* family = family_named(type);
    if (!family && root.present("architectures") && root.value("architectures").is_array()) {
        // A family published under its own model_type is read by the architecture it names.
        for (const auto& name : root.value("architectures"))
            for (const Family& known : kFamilies)
                if (!family && name.is_string() && !known.architecture.empty() && name.get<std::string>() == known.architecture) family = &known;
    }
    if (!family)
        root.fail("model_type", "unsupported architecture \"" + type + "\" (supported: " + supported_list() +
                                    ", or a config whose architectures names one of them)");
    const bool nested = family->type == "llama4";  // the language model is under text_config
    if (!family->reads_as.empty()) family = family_named(family->reads_as);

    ModelSpec model;
    Notes notes;
    ModelFieldNames names;
    model.name = model_name(root.read("_name_or_path").optional_string("_name_or_path"), path);
    const std::string family_type(family->type);
    Config* architecture = &root;
    std::optional<Config> text;
    if (nested) {
        // The language model is text_config; the vision encoder and projector are not imported.
        if (!root.present("text_config")) root.fail("text_config", "missing; a " + type + " config describes its language model there");
        root.understand("text_config");
        text.emplace(root.value("text_config"), path.string(), "text_config");
        const auto text_type = text->read("model_type").optional_string("model_type");
        text->understand("_name_or_path");
        if (text_type && *text_type != family_type)
            text->fail("model_type", "expected \"" + family_type + "\", found \"" + *text_type + "\"");
        architecture = &*text;
    }
    read_architecture(*architecture, *family, model, notes, names);
    if (text) {
        const bool tied = root.flag("tie_word_embeddings", model.tied_embeddings);
        if (!text->contains("tie_word_embeddings")) model.tied_embeddings = tied;
        root.understand("vision_config");
        if (root.present("vision_config")) notes.push_back("the vision encoder and its projector (vision_config)");
        note_quantization(*text, notes);
    }
    note_quantization(root, notes);
    model.description = describe(model, type, *family, notes);
    validate_model(model, path.string(), names);
    if (text) text->refuse_unread(family_type);
    root.refuse_unread(type == family_type || text ? type : type + " (read as " + family_type + ")");
    return model;
}

}  // namespace ridgeline
