#pragma once
// Closed-form conditions for when training stays compute-bound and how long it takes (the
// scaling book's rules of thumb), used to explain results and as quick checks of the detailed model.
#include <cmath>

namespace ridgeline {

// Data parallelism (or FSDP) over `axes` links of collective bandwidth W each: the per-chip token
// batch must exceed C / (W x axes) for the gradient (or weight) traffic to hide under compute.
// An MoE layer's experts see only top_k / n_experts of the tokens, so the batch grows by E / k.
[[nodiscard]] inline double data_parallel_critical_tokens_per_chip(double peak_flops_per_s, double collective_bw_Bps,
                                                                   double n_experts = 1, double top_k = 1, double axes = 1) {
    return peak_flops_per_s / (collective_bw_Bps * axes) * n_experts / top_k;
}

// A ring of only `members` carries (members - 1) / members of the array: small groups need less.
[[nodiscard]] inline double small_group_critical_tokens(double critical_tokens, double members) {
    return critical_tokens * (members - 1.0) / members;
}

// Streaming an MoE layer's weights from HBM: each expert sees top_k / n_experts of the batch.
[[nodiscard]] inline double moe_critical_batch_tokens(double dense_critical_batch_tokens, double n_experts,
                                                      double top_k) {
    return dense_critical_batch_tokens * n_experts / top_k;
}

// Tensor parallelism over Y chips on M_Y axes stays compute-bound while Y < M_Y F / (C / W).
[[nodiscard]] inline double tensor_parallel_max_degree(double d_ff, double peak_over_bandwidth, double axes = 1) {
    return axes * d_ff / peak_over_bandwidth;
}
[[nodiscard]] inline double tensor_parallel_min_d_ff(double degree, double peak_over_bandwidth, double axes = 1) {
    return degree * peak_over_bandwidth / axes;
}

// Mixed FSDP (X) x tensor (Y) over N chips: the FSDP degree that balances both collectives,
// sqrt((B / F) (M_X / M_Y) N), and the per-chip batch below which every split is comms-bound,
// alpha^2 / (M_X M_Y F) with alpha = C / W.
[[nodiscard]] inline double mixed_fsdp_optimal_degree(double batch_tokens, double d_ff, double chips, double mx_over_my) {
    return std::sqrt(batch_tokens / d_ff * mx_over_my * chips);
}
[[nodiscard]] inline double mixed_fsdp_tp_critical_tokens_per_chip(double peak_over_bandwidth, double d_ff, double mx_times_my) {
    return peak_over_bandwidth * peak_over_bandwidth / (mx_times_my * d_ff);
}

// Pipeline stages pass activations: per hop 2BD / (W N_mb), over N_mb + N_stages - 2 hops.
[[nodiscard]] inline double pipeline_activation_transfer_s(double batch_tokens, double d_model, double bandwidth_Bps,
                                                           double microbatches, double stages, double bytes = 2) {
    return bytes * batch_tokens * d_model / (bandwidth_Bps * microbatches) * (microbatches + stages - 2.0);
}

// Total training FLOPs of the 6N rule, and wall time at a given MFU.
[[nodiscard]] inline double six_n_training_flops(double params, double tokens) { return 6.0 * params * tokens; }
[[nodiscard]] inline double training_time_s(double total_flops, double chips, double peak_flops_per_s, double mfu) {
    return total_flops / (chips * peak_flops_per_s * mfu);
}
[[nodiscard]] inline double achieved_mfu(double total_flops, double chip_seconds, double peak_flops_per_s) {
    return total_flops / (chip_seconds * peak_flops_per_s);
}

}  // namespace ridgeline
