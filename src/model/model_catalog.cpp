#include "model/model_catalog.hpp"

#include <tuple>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/model_validation.hpp"

namespace ridgeline {

namespace {
constexpr const char* kModelFormat = "ridgeline.model-spec/1";

std::int64_t head_dim_or_derived(io::JsonObject& root, std::int64_t d_model, std::int64_t n_heads,
                                 const std::string& heads_field) {
    if (auto head_dim = root.optional_positive_int("head_dim")) return *head_dim;
    if (d_model % n_heads != 0)
        root.fail(heads_field, std::to_string(n_heads) + " heads do not divide d_model " + std::to_string(d_model) +
                                   " and no head_dim is given");
    return d_model / n_heads;
}
}  // namespace

ModelSpec load_model_file(const std::filesystem::path& path) {
    io::JsonFile file(path, kModelFormat);
    io::JsonObject& root = file.root();
    ModelSpec model;
    std::tie(model.name, model.description) = io::read_named(root);
    (void)root.string("source");
    model.n_layers = root.positive_int("n_layers");
    model.d_model = root.positive_int("d_model");
    model.n_heads = root.positive_int("n_heads");
    model.n_kv_heads = root.optional_positive_int("n_kv_heads").value_or(model.n_heads);
    model.head_dim = head_dim_or_derived(root, model.d_model, model.n_heads, "n_heads");
    model.d_ff = root.positive_int("d_ff");
    model.vocab_size = root.positive_int("vocab_size");
    const std::string mlp = root.string("mlp");
    if (mlp == "gated") model.mlp = MlpKind::gated;
    else if (mlp == "plain") model.mlp = MlpKind::plain;
    else root.fail("mlp", "expected \"gated\" or \"plain\", found \"" + mlp + "\"");
    const std::string norm = root.string("norm");
    if (norm == "rmsnorm") model.norm = NormKind::rmsnorm;
    else if (norm == "layernorm") model.norm = NormKind::layernorm;
    else root.fail("norm", "expected \"rmsnorm\" or \"layernorm\", found \"" + norm + "\"");
    model.tied_embeddings = root.boolean("tied_embeddings", false);
    model.qkv_bias = root.boolean("qkv_bias", false);
    model.linear_bias = root.boolean("linear_bias", false);
    model.qk_norm = root.boolean("qk_norm", false);
    model.learned_position_embeddings = root.non_negative_int("learned_position_embeddings", 0);
    if (auto moe = root.optional_object("moe")) {
        MoeSpec spec;
        spec.n_experts = moe->positive_int("n_experts");
        spec.top_k = moe->positive_int("top_k");
        spec.d_ff_expert = moe->positive_int("d_ff_expert");
        spec.n_shared_experts = moe->non_negative_int("n_shared_experts", 0);
        spec.first_dense_layers = moe->non_negative_int("first_dense_layers", 0);
        spec.layer_step = moe->optional_positive_int("layer_step").value_or(1);
        if (moe->has("routing_groups") || moe->has("routing_groups_per_token")) {
            spec.routing_groups = moe->positive_int("routing_groups");
            spec.routing_groups_per_token = moe->positive_int("routing_groups_per_token");
        }
        moe->finish();
        model.moe = spec;
    }
    if (auto mla = root.optional_object("mla")) {
        MlaSpec spec;
        spec.q_lora_rank = mla->non_negative_int("q_lora_rank", 0);
        spec.kv_lora_rank = mla->positive_int("kv_lora_rank");
        spec.qk_nope_head_dim = mla->positive_int("qk_nope_head_dim");
        spec.qk_rope_head_dim = mla->positive_int("qk_rope_head_dim");
        spec.v_head_dim = mla->positive_int("v_head_dim");
        mla->finish();
        model.mla = spec;
    }
    model.context_length = root.non_negative_int("context_length", 0);
    model.mtp_depth = root.non_negative_int("mtp_depth", 0);
    if (auto local = root.optional_object("local_attention")) {
        AttentionWindow window;
        const std::string kind = local->string("kind");
        if (kind == "sliding") window.kind = LocalAttention::sliding;
        else if (kind == "chunked") window.kind = LocalAttention::chunked;
        else local->fail("kind", "expected \"sliding\" or \"chunked\", found \"" + kind + "\"");
        window.tokens = local->positive_int("tokens");
        // Every global_every-th layer (1-based) attends to the whole context; 0: none does.
        const std::int64_t global_every = local->non_negative_int("global_every", 0);
        if (global_every == 1) local->fail("global_every", "1 makes every layer global; leave local_attention out instead");
        window.local_layers = model.n_layers - (global_every > 0 ? model.n_layers / global_every : 0);
        local->finish();
        model.window = window;
    }
    model.published_params = root.optional_sourced_positive_number("published_params");
    model.published_active_params = root.optional_sourced_positive_number("published_active_params");
    model.published_mtp_params = root.optional_sourced_positive_number("published_mtp_params");
    root.finish();
    validate_model(model, path.string(), {});
    return model;
}

std::vector<CatalogEntry> list_models(const std::filesystem::path& data_dir) {
    return io::list_catalog(data_dir / "models");
}

ModelSpec resolve_model(const std::string& name_or_path, const std::filesystem::path& data_dir) {
    if (io::looks_like_path(name_or_path)) {
        const nlohmann::json document = io::parse_json_file(name_or_path);
        if (!io::format_id(document).empty()) return load_model_file(name_or_path);
        return load_hf_config(name_or_path);
    }
    const auto models = list_models(data_dir);
    if (const auto entry = io::find_entry(models, name_or_path)) return load_model_file(entry->file);
    throw InputError(kRequest, "model", "unknown model \"" + name_or_path + "\"; known: " + io::known_names(models) +
                                        " (or give a path to a model file or a Hugging Face config.json)");
}

}  // namespace ridgeline
