#include "sharding/strategy_file.hpp"

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "mesh/plan_axes.hpp"

namespace ridgeline {

const char* logical_dim_name(LogicalDim dim) {
    static const char* names[] = {"batch", "seq", "embed", "heads", "mlp", "expert", "latent"};
    return names[static_cast<std::size_t>(dim)];
}

namespace {

constexpr const char* kFormat = "ridgeline.strategy/1";

AxisList axis_list(const nlohmann::json& value, io::JsonObject& parent, const std::string& key) {
    if (!value.is_array()) parent.fail(key, "expected an array of mesh axis names");
    AxisList axes;
    for (const auto& item : value) {
        if (!item.is_string() || item.get<std::string>().empty()) parent.fail(key, "expected mesh axis names");
        const std::string name = item.get<std::string>();
        // An axis no plan has would split nothing: a typo, not a choice.
        if (std::find(kPlanAxisNames.begin(), kPlanAxisNames.end(), name) == kPlanAxisNames.end())
            parent.fail(key, "unknown mesh axis \"" + name + "\"; the plan's axes are data, fsdp, expert, tensor, context and pipeline");
        axes.push_back(name);
    }
    return axes;
}

TensorSpec tensor_spec(io::JsonObject& specs, const nlohmann::json& document, const std::string& key,
                       std::initializer_list<LogicalDim> allowed) {
    TensorSpec spec;
    auto object = specs.object(key);
    std::vector<std::string> used;  // a mesh axis splits at most one dimension of a tensor, once
    for (const std::string& dim_name : object.keys()) {
        bool known = false;
        for (LogicalDim dim : allowed) {
            if (dim_name != logical_dim_name(dim)) continue;
            object.allow(dim_name);
            spec.on(dim) = axis_list(document.at(key).at(dim_name), object, dim_name);
            for (const std::string& axis : spec.on(dim)) {
                if (std::find(used.begin(), used.end(), axis) != used.end())
                    object.fail(dim_name, "mesh axis \"" + axis + "\" already splits this tensor (an axis may split one dimension, once)");
                used.push_back(axis);
            }
            known = true;
        }
        if (!known) {
            std::string names;
            for (LogicalDim dim : allowed) names += (names.empty() ? "" : ", ") + std::string(logical_dim_name(dim));
            object.fail(dim_name, "not a dimension of this tensor (" + names + ")");
        }
    }
    object.finish();
    return spec;
}

}  // namespace

Strategy load_strategy_file(const std::filesystem::path& path) {
    io::JsonFile file(path, kFormat);
    io::JsonObject& root = file.root();
    const nlohmann::json& document = file.document();
    Strategy strategy;
    std::tie(strategy.name, strategy.description) = io::read_named(root);
    using D = LogicalDim;
    auto activations = root.object("activations");
    const auto& act_doc = document.at("activations");
    strategy.residual = tensor_spec(activations, act_doc, "residual", {D::batch, D::seq, D::embed});
    strategy.attention = tensor_spec(activations, act_doc, "attention", {D::batch, D::seq, D::heads});
    strategy.mlp_hidden = tensor_spec(activations, act_doc, "mlp_hidden", {D::batch, D::seq, D::mlp, D::expert});
    activations.finish();
    auto weights = root.object("weights");
    const auto& w_doc = document.at("weights");
    strategy.w_qkv = tensor_spec(weights, w_doc, "qkv", {D::embed, D::heads});
    strategy.w_out = tensor_spec(weights, w_doc, "out", {D::heads, D::embed});
    strategy.w_mlp_in = tensor_spec(weights, w_doc, "mlp_in", {D::embed, D::mlp, D::expert});
    strategy.w_mlp_out = tensor_spec(weights, w_doc, "mlp_out", {D::mlp, D::embed, D::expert});
    weights.finish();
    strategy.layers_axis = root.optional_string("layers").value_or("");
    const std::string context = root.optional_string("context_attention").value_or("ring");
    if (context == "ring") strategy.context_attention = ContextAttention::ring;
    else if (context == "all_gather") strategy.context_attention = ContextAttention::all_gather;
    else root.fail("context_attention", "expected \"ring\" or \"all_gather\", found \"" + context + "\"");
    if (root.has("gradients_sharded_over"))
        strategy.gradient_shard_axes = axis_list(root.raw("gradients_sharded_over"), root, "gradients_sharded_over");
    if (root.has("optimizer_sharded_over"))
        strategy.optimizer_shard_axes = axis_list(root.raw("optimizer_sharded_over"), root, "optimizer_sharded_over");
    root.finish();
    return strategy;
}

std::vector<CatalogEntry> list_strategies(const std::filesystem::path& data_dir) {
    return io::list_catalog(data_dir / "strategies");
}

Strategy resolve_strategy(const std::string& name_or_path, const std::filesystem::path& data_dir) {
    return load_strategy_file(io::catalog_file(name_or_path, list_strategies(data_dir), "strategy"));
}

}  // namespace ridgeline
