#pragma once
// Checks that a model's dimensions fit together, whichever file format they came from.
#include <string>

#include "model/model_spec.hpp"

namespace ridgeline {

// Throws InputError naming `origin` and the offending field (named as in that file's format): sizes
// that do not fit together, and sizes far past any model built (a typo or a hostile file, whose
// products would overflow the FLOP and byte counts downstream).
struct ModelFieldNames {
    std::string n_layers = "n_layers";
    std::string d_model = "d_model";
    std::string d_ff = "d_ff";
    std::string vocab_size = "vocab_size";
    std::string d_ff_expert = "moe.d_ff_expert";
    std::string n_experts = "moe.n_experts";
    std::string mtp_depth = "mtp_depth";
    std::string n_heads = "n_heads";
    std::string n_kv_heads = "n_kv_heads";
    std::string head_dim = "head_dim";
    std::string top_k = "moe.top_k";
    std::string first_dense_layers = "moe.first_dense_layers";
    std::string layer_step = "moe.layer_step";
    std::string routing_groups = "moe.routing_groups";
    std::string routing_groups_per_token = "moe.routing_groups_per_token";
    std::string window = "local_attention.tokens";
    std::string local_layers = "local_attention.global_every";
};
void validate_model(const ModelSpec& model, const std::string& origin, const ModelFieldNames& names);

}  // namespace ridgeline
