#pragma once
// Everything `ridgeline model` reports about one model at one sequence length.
#include <array>

#include "model/transformer_math.hpp"

namespace ridgeline {

struct ModelSummary {
    ParamCounts params;
    double seq_len = 0;
    FlopsPerToken forward;            // causal attention at seq_len
    double training_flops_per_token = 0;
    double six_n_flops_per_token = 0;
    std::array<double, 3> kv_bytes_per_token{};  // bf16, fp8, int8
    std::array<double, 3> activation_bytes_per_token_per_layer{};  // none, selective, full (bf16)
    // Totals at seq_len for one sequence.
    std::array<double, 3> kv_bytes_per_sequence{};
    std::array<double, 3> activation_bytes_per_sequence{};  // all layers
};

inline constexpr std::array<Dtype, 3> kKvDtypes = {Dtype::bf16, Dtype::fp8, Dtype::int8};
inline constexpr std::array<Recompute, 3> kRecomputeModes = {Recompute::none, Recompute::selective, Recompute::full};
[[nodiscard]] const char* recompute_name(Recompute recompute);

[[nodiscard]] ModelSummary summarize_model(const ModelSpec& model, double seq_len);

}  // namespace ridgeline
