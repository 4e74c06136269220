#include <nlohmann/json.hpp>

#include "report/reports.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {
const char* dtype_key(std::size_t i) { return dtype_name(kKvDtypes[i]).data(); }
const char* window_kind(const AttentionWindow& w) { return w.kind == LocalAttention::sliding ? "sliding" : "chunked"; }
}  // namespace

std::string model_table(const ModelSpec& model, const ModelSummary& summary) {
    const ParamCounts& p = summary.params;
    std::string text = "Model " + model.name + " — " + model.description + "\n\n";
    if (model.window)
        text += "local attention: " + std::string(window_kind(*model.window)) + " window of " + fixed(static_cast<double>(model.window->tokens), 0) +
                " tokens on " + fixed(static_cast<double>(model.window->local_layers), 0) + " of " + fixed(static_cast<double>(model.n_layers), 0) +
                " layers\n\n";
    Table params({"parameters", "count"});
    params.add_row({"total", si(p.total)});
    params.add_row({"active per token", si(p.active)});
    params.add_row({"embedding", si(p.embedding)});
    params.add_row({"unembedding", si(p.unembedding)});
    params.add_row({"attention per layer", si(p.attention_per_layer)});
    if (model.dense_layers() > 0) params.add_row({"dense MLP per layer", si(p.dense_mlp_per_layer)});
    if (model.moe) {
        params.add_row({"MoE layer (all experts)", si(p.moe_layer_total)});
        params.add_row({"MoE layer (active)", si(p.moe_layer_active)});
    }
    if (model.mtp_depth > 0)
        params.add_row({"multi-token prediction (" + fixed(static_cast<double>(model.mtp_depth), 0) + " module" +
                            (model.mtp_depth > 1 ? "s" : "") + ", not in total)",
                        si(static_cast<double>(model.mtp_depth) * p.mtp_module) +
                            (model.published_mtp_params
                                 ? " (published " + si(*model.published_mtp_params) + ", " +
                                       fixed(100.0 * (static_cast<double>(model.mtp_depth) * p.mtp_module / *model.published_mtp_params - 1.0), 2) + "%)"
                                 : "")});
    if (model.published_params)
        params.add_row({"published total", si(*model.published_params) + " (" +
                                               fixed(100.0 * (p.total / *model.published_params - 1.0), 2) + "%)"});
    text += params.render() + "\n";

    Table flops({"FLOPs per token (seq " + fixed(summary.seq_len, 0) + ", causal)", "forward", "training (3x)"});
    flops.add_row({"weight matmuls", si(summary.forward.matmul_forward, "FLOP"), si(3 * summary.forward.matmul_forward, "FLOP")});
    flops.add_row({"attention (QK^T, AV)", si(summary.forward.attention_forward, "FLOP"), si(3 * summary.forward.attention_forward, "FLOP")});
    flops.add_row({"total", si(summary.forward.forward(), "FLOP"), si(summary.training_flops_per_token, "FLOP")});
    flops.add_row({"6N rule", "", si(summary.six_n_flops_per_token, "FLOP")});
    text += flops.render() + "\n";

    Table kv({"KV cache", "per token", "per sequence" + std::string(model.window ? " (windows counted)" : "")});
    for (std::size_t i = 0; i < kKvDtypes.size(); ++i)
        kv.add_row({dtype_key(i), si(summary.kv_bytes_per_token[i], "B"), si(summary.kv_bytes_per_sequence[i], "B")});
    text += kv.render() + "\n";

    Table activations({"activations (bf16, fused attention)", "per token per layer", "per sequence, all layers"});
    for (const ModelSummary::Activations& a : summary.activations)
        activations.add_row({"recompute " + a.policy + (a.offloaded ? " (the rest in host memory)" : ""), si(a.bytes_per_token_per_layer, "B"),
                             si(a.bytes_per_sequence, "B")});
    return text + activations.render();
}

std::string model_json(const ModelSpec& model, const ModelSummary& summary) {
    const ParamCounts& p = summary.params;
    nlohmann::json doc;
    doc["schema"] = "ridgeline.model/1";
    doc["model"] = {{"name", model.name},           {"n_layers", model.n_layers}, {"d_model", model.d_model},
                    {"n_heads", model.n_heads},     {"n_kv_heads", model.n_kv_heads},
                    {"head_dim", model.head_dim},   {"d_ff", model.d_ff},         {"vocab_size", model.vocab_size},
                    {"mlp", model.mlp == MlpKind::gated ? "gated" : "plain"},
                    {"tied_embeddings", model.tied_embeddings}};
    if (model.moe)
        doc["model"]["moe"] = {{"n_experts", model.moe->n_experts}, {"top_k", model.moe->top_k},
                               {"d_ff_expert", model.moe->d_ff_expert}, {"n_shared_experts", model.moe->n_shared_experts},
                               {"first_dense_layers", model.moe->first_dense_layers},
                               {"layer_step", model.moe->layer_step}};
    if (model.window)
        doc["model"]["local_attention"] = {{"kind", window_kind(*model.window)}, {"tokens", model.window->tokens},
                                           {"local_layers", model.window->local_layers}};
    if (model.context_length > 0) doc["model"]["context_length"] = model.context_length;
    doc["params"] = {{"total", p.total},
                     {"active", p.active},
                     {"embedding", p.embedding},
                     {"unembedding", p.unembedding},
                     {"attention_per_layer", p.attention_per_layer},
                     {"dense_mlp_per_layer", p.dense_mlp_per_layer},
                     {"moe_layer_total", p.moe_layer_total},
                     {"moe_layer_active", p.moe_layer_active},
                     {"norms", p.norms},
                     {"mtp_depth", model.mtp_depth},
                     {"mtp_module", p.mtp_module}};
    if (model.published_params) doc["params"]["published_total"] = *model.published_params;
    doc["seq_len"] = summary.seq_len;
    doc["flops_per_token"] = {{"matmul_forward_flops", summary.forward.matmul_forward},
                              {"attention_forward_flops", summary.forward.attention_forward},
                              {"forward_flops", summary.forward.forward()},
                              {"training_flops", summary.training_flops_per_token},
                              {"six_n_flops", summary.six_n_flops_per_token},
                              {"attention_causal", true}};
    for (std::size_t i = 0; i < kKvDtypes.size(); ++i) {
        doc["kv_cache_bytes_per_token"][dtype_key(i)] = summary.kv_bytes_per_token[i];
        doc["kv_cache_bytes_per_sequence"][dtype_key(i)] = summary.kv_bytes_per_sequence[i];
    }
    for (const ModelSummary::Activations& a : summary.activations) {
        doc["activation_bytes_per_token_per_layer"][a.policy] = a.bytes_per_token_per_layer;
        doc["activation_bytes_per_sequence"][a.policy] = a.bytes_per_sequence;
    }
    return doc.dump(2);
}

}  // namespace ridgeline::report
