#pragma once
// Everything `ridgeline model` reports about one model at one sequence length.
#include <array>

#include <string>
#include <vector>

#include "model/recompute_policy.hpp"
#include "model/transformer_math.hpp"

namespace ridgeline {

struct ModelSummary {
    ParamCounts params;
    double seq_len = 0;
    FlopsPerToken forward;            // causal attention at seq_len
    double training_flops_per_token = 0;
    double six_n_flops_per_token = 0;
    std::array<double, 3> kv_bytes_per_token{};  // bf16, fp8, int8
    std::array<double, 3> kv_bytes_per_sequence{};  // at seq_len, windows counted
    // Activations (bf16, fused attention) on the chip under each recomputation policy asked about.
    struct Activations {
        std::string policy;
        bool offloaded = false;  // the policy keeps the rest in host memory
        double bytes_per_token_per_layer = 0;
        double bytes_per_sequence = 0;  // all layers, at seq_len
    };
    std::vector<Activations> activations;
};

inline constexpr std::array<Dtype, 3> kKvDtypes = {Dtype::bf16, Dtype::fp8, Dtype::int8};

[[nodiscard]] ModelSummary summarize_model(const ModelSpec& model, double seq_len, const std::vector<RecomputePolicy>& policies);

}  // namespace ridgeline
