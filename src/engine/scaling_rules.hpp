#pragma once
// Closed-form conditions for when work stays compute-bound (the scaling book's rules of thumb),
// used to explain results and as fast checks of the detailed model.
namespace ridgeline {

// Data parallelism over a level with collective bandwidth W: the per-chip token batch must exceed
// C / W for the gradient all-reduce to hide under the backward pass. An MoE layer's experts see
// only top_k / n_experts of the tokens, so the batch must grow by n_experts / top_k.
[[nodiscard]] inline double data_parallel_critical_tokens_per_chip(double peak_flops_per_s, double collective_bw_Bps,
                                                                   double n_experts = 1, double top_k = 1) {
    return peak_flops_per_s / collective_bw_Bps * n_experts / top_k;
}

// Streaming an MoE layer's weights from HBM: each expert sees top_k / n_experts of the batch.
[[nodiscard]] inline double moe_critical_batch_tokens(double dense_critical_batch_tokens, double n_experts,
                                                      double top_k) {
    return dense_critical_batch_tokens * n_experts / top_k;
}

}  // namespace ridgeline
