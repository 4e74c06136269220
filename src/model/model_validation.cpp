#include "model/model_validation.hpp"

#include "core/error.hpp"

namespace ridgeline {

void validate_model(const ModelSpec& model, const std::string& origin, const ModelFieldNames& names) {
    const auto text = [](std::int64_t value) { return std::to_string(value); };
    if (model.n_kv_heads > model.n_heads || model.n_heads % model.n_kv_heads != 0)
        throw InputError(origin, names.n_kv_heads,
                         text(model.n_kv_heads) + " KV heads do not divide " + text(model.n_heads) + " query heads");
    if (model.moe) {
        if (model.moe->top_k > model.moe->n_experts)
            throw InputError(origin, names.top_k,
                             "top_k " + text(model.moe->top_k) + " exceeds " + text(model.moe->n_experts) + " experts");
        if (model.moe->first_dense_layers > model.n_layers)
            throw InputError(origin, names.first_dense_layers, "exceeds the number of layers " + text(model.n_layers));
    }
}

}  // namespace ridgeline
