#include "model/model_validation.hpp"

#include "core/error.hpp"
#include "model/plausible_sizes.hpp"

namespace ridgeline {

void validate_model(const ModelSpec& model, const std::string& origin, const ModelFieldNames& names) {
    const auto text = [](std::int64_t value) { return std::to_string(value); };
    const auto at_most = [&](std::int64_t value, std::int64_t limit, const std::string& field) {
        if (value > limit)
            throw InputError(origin, field, text(value) + " is implausible (at most " + text(limit) + ": about 100x the largest model published)");
    };
    at_most(model.n_layers, kMaxLayers, names.n_layers);
    at_most(model.d_model, kMaxWidth, names.d_model);
    at_most(model.d_ff, kMaxFfnWidth, names.d_ff);
    at_most(model.vocab_size, kMaxVocabulary, names.vocab_size);
    at_most(model.n_heads, kMaxHeads, names.n_heads);
    at_most(model.head_dim, kMaxHeads, names.head_dim);
    at_most(model.mtp_depth, kMaxMtpDepth, names.mtp_depth);
    if (model.moe) {
        at_most(model.moe->n_experts, kMaxExperts, names.n_experts);
        at_most(model.moe->d_ff_expert, kMaxFfnWidth, names.d_ff_expert);
    }
    if (model.n_kv_heads > model.n_heads || model.n_heads % model.n_kv_heads != 0)
        throw InputError(origin, names.n_kv_heads,
                         text(model.n_kv_heads) + " KV heads do not divide " + text(model.n_heads) + " query heads");
    if (model.window) {
        const AttentionWindow& w = *model.window;
        if (w.tokens < 1) throw InputError(origin, names.window, "a window of " + text(w.tokens) + " tokens");
        if (model.context_length > 0 && w.tokens > model.context_length)
            throw InputError(origin, names.window, "a window of " + text(w.tokens) + " tokens is longer than the model's context of " +
                                                       text(model.context_length) + " tokens");
        if (w.local_layers < 1 || w.local_layers > model.n_layers)
            throw InputError(origin, names.local_layers, text(w.local_layers) + " local layers of " + text(model.n_layers));
    }
    if (model.moe) {
        if (model.moe->top_k > model.moe->n_experts)
            throw InputError(origin, names.top_k,
                             "top_k " + text(model.moe->top_k) + " exceeds " + text(model.moe->n_experts) + " experts");
        if (model.moe->first_dense_layers > model.n_layers)
            throw InputError(origin, names.first_dense_layers, "exceeds the number of layers " + text(model.n_layers));
        if (model.moe->layer_step > model.n_layers - model.moe->first_dense_layers)
            throw InputError(origin, names.layer_step, "every " + text(model.moe->layer_step) + "th layer of the " +
                                                           text(model.n_layers - model.moe->first_dense_layers) + " after the dense ones: none is MoE");
        const MoeSpec& moe = *model.moe;
        if (moe.routing_groups > 0) {
            if (moe.n_experts % moe.routing_groups != 0)
                throw InputError(origin, names.routing_groups, text(moe.routing_groups) + " groups do not split " + text(moe.n_experts) + " experts");
            if (moe.routing_groups_per_token > moe.routing_groups)
                throw InputError(origin, names.routing_groups_per_token,
                                 text(moe.routing_groups_per_token) + " groups per token of " + text(moe.routing_groups));
            if (moe.routing_groups_per_token * (moe.n_experts / moe.routing_groups) < moe.top_k)
                throw InputError(origin, names.routing_groups_per_token, "the groups a token may use hold fewer than its top_k " + text(moe.top_k) + " experts");
        }
    }
}

}  // namespace ridgeline
