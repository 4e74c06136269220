#include "engine/model_summary.hpp"

#include "engine/layer_ops.hpp"

namespace ridgeline {

ModelSummary summarize_model(const ModelSpec& model, double seq_len, const std::vector<RecomputePolicy>& policies) {
    ModelSummary summary;
    summary.params = count_params(model);
    summary.seq_len = seq_len;
    summary.forward = flops_per_token(model, seq_len, /*causal=*/true);
    summary.training_flops_per_token = summary.forward.training();
    summary.six_n_flops_per_token = six_n_flops_per_token(model);
    for (std::size_t i = 0; i < kKvDtypes.size(); ++i) {
        summary.kv_bytes_per_token[i] = kv_cache_bytes_per_token(model, kKvDtypes[i]);
        summary.kv_bytes_per_sequence[i] = kv_cache_bytes_per_sequence(model, seq_len, kKvDtypes[i]);
    }
    for (const RecomputePolicy& policy : policies) {
        SavedTensors saved = saved_tensors(policy.modules, AttentionKernel::fused, model.mla.has_value());
        if (policy.offload) saved &= ~offloaded_tensors(saved);
        const double per_token = saved_elements_per_token(model, seq_len, saved) * bytes_per_element(Dtype::bf16);
        summary.activations.push_back({policy.name, policy.offload, per_token, per_token * seq_len * static_cast<double>(model.n_layers)});
    }
    return summary;
}

}  // namespace ridgeline
