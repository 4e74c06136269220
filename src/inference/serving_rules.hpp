#pragma once
// Closed forms of inference arithmetic (the scaling book's serving rules): the roofline of a
// decode step, how many sequences fit, prefill time at a utilisation, and the balance of a
// disaggregated prefill/decode deployment. The serving engine (inference/serving.cpp) is built
// from these; tests check them against the book's worked numbers.
#include <cmath>

namespace ridgeline {

// Streaming `bytes` from the HBM of `chips` chips that share the work evenly.
[[nodiscard]] inline double hbm_read_s(double bytes, double chips, double hbm_bw_Bps) {
    return bytes / (chips * hbm_bw_Bps);
}

// One decode step, its lower bound: the KV cache is read once (attention does too little
// arithmetic per byte to hide it), and the weight matmuls take the larger of their FLOPs and
// their weight traffic.
struct DecodeStepTerms {
    double matmul_flops = 0;   // 2 x parameters x tokens in the batch
    double weight_bytes = 0;   // every weight read once per step
    double kv_bytes = 0;       // the batch's whole KV cache
    double chips = 1;
    double hbm_bw_Bps = 0;     // per chip
    double peak_flops_per_s = 0;  // per chip
};
[[nodiscard]] inline double decode_step_lower_bound_s(const DecodeStepTerms& t) {
    const double matmul_compute_s = t.matmul_flops / (t.chips * t.peak_flops_per_s);
    const double weights_s = hbm_read_s(t.weight_bytes, t.chips, t.hbm_bw_Bps);
    return hbm_read_s(t.kv_bytes, t.chips, t.hbm_bw_Bps) + std::fmax(matmul_compute_s, weights_s);
}

// Every sequence of the batch gains one token per step.
[[nodiscard]] inline double decode_tokens_per_s(double batch_seqs, double step_s) { return batch_seqs / step_s; }

// Requests finished per second per chip when each generates `output_len` tokens.
[[nodiscard]] inline double queries_per_s_per_chip(double batch_seqs, double step_s, double output_len, double chips) {
    return batch_seqs / (step_s * output_len) / chips;
}

// Bytes to hold the weights and `batch_seqs` KV caches of `seq_len` tokens.
[[nodiscard]] inline double serving_memory_bytes(double weight_bytes, double kv_bytes_per_token, double seq_len,
                                                 double batch_seqs) {
    return weight_bytes + kv_bytes_per_token * seq_len * batch_seqs;
}

// The most whole sequences whose KV caches fit in `free_bytes` (0 when not even one does).
[[nodiscard]] inline double max_sequences_that_fit(double free_bytes, double kv_bytes_per_seq) {
    if (free_bytes <= 0 || kv_bytes_per_seq <= 0) return 0;
    return std::floor(free_bytes / kv_bytes_per_seq);
}

// Dot-product attention of `queries` against `keys` (fused: scores stay on chip), per head
// of width head_dim: FLOPs 4 T S and bytes for Q and O (T each) and K and V (S each).
struct AttentionTraffic {
    double flops = 0;
    double bytes = 0;
    [[nodiscard]] double intensity_flops_per_byte() const { return flops / bytes; }
};
[[nodiscard]] inline AttentionTraffic attention_traffic(double queries, double keys, double q_heads, double kv_heads,
                                                        double head_dim, double bytes_per_element) {
    return {4.0 * queries * keys * q_heads * head_dim,
            bytes_per_element * head_dim * (2.0 * queries * q_heads + 2.0 * keys * kv_heads)};
}

// Prefill time of `tokens` tokens through a model of `params` (active) parameters at a given
// fraction of the peak of `chips` chips.
[[nodiscard]] inline double prefill_time_s(double params, double tokens, double chips, double peak_flops_per_s,
                                           double utilisation) {
    return 2.0 * params * tokens / (chips * peak_flops_per_s * utilisation);
}

// Decode with model parallelism over Y chips: each step moves the batch's activations (about
// B D per matmul over ICI) and reads 1/Y of the weights (about D F from HBM). The activations
// win once Y exceeds F W_ici / (B W_hbm).
[[nodiscard]] inline double decode_model_parallel_limit(double d_ff, double batch_tokens, double hbm_bw_Bps,
                                                        double ici_bw_Bps) {
    return d_ff * ici_bw_Bps / (batch_tokens * hbm_bw_Bps);
}

// Time to move the [B, D] activations of one matmul over a link (the 2BD bytes of bf16).
[[nodiscard]] inline double activation_transfer_s(double batch_tokens, double d_model, double bytes_per_element,
                                                  double link_bw_Bps) {
    return batch_tokens * d_model * bytes_per_element / link_bw_Bps;
}

// 2D weight-stationary sharding (the book's inference chapter, worked problem 7) sends
// sqrt(128) B D / (sqrt(N) W) per layer, shrinking with the chip count, where 1D model parallelism's
// traffic does not: by the book's comparison 2D wins above N = 32 (F / D) (3/4)^2 chips.
[[nodiscard]] inline double weight_stationary_2d_min_chips(double f_over_d) {
    return 32.0 * f_over_d * (3.0 / 4.0) * (3.0 / 4.0);
}

// KV-cache tokens freed per decode step when requests of `prefill_len` prompt tokens and
// `decode_len` generated tokens finish at a steady rate: B / G requests per step, each freeing P + G.
[[nodiscard]] inline double kv_tokens_freed_per_step(double batch_seqs, double prefill_len, double decode_len) {
    return batch_seqs * (prefill_len + decode_len) / decode_len;
}

// Disaggregated serving: one decode server finishes `batch_seqs` requests every
// `decode_len` steps; one prefill server finishes a prompt every `prefill_s`. The prefill servers
// needed per decode server balance the two rates.
[[nodiscard]] inline double prefill_servers_per_decode_server(double prefill_s, double step_s, double batch_seqs,
                                                              double decode_len) {
    return prefill_s * batch_seqs / (step_s * decode_len);
}

}  // namespace ridgeline
