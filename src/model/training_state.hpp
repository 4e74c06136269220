#pragma once
// Bytes of model state per parameter during training, and how many chips merely hold it.
#include "core/dtype.hpp"

namespace ridgeline {

struct TrainingPrecision {
    double param_bytes = 2;      // working copy of the weights
    double grad_bytes = 2;       // gradients
    double master_bytes = 4;     // fp32 master weights (0 when training in pure bf16)
    double optimizer_bytes = 8;  // Adam: two moments
    [[nodiscard]] double bytes_per_param() const { return param_bytes + grad_bytes + master_bytes + optimizer_bytes; }
    // What a checkpoint saves: the weights, master weights and moments (gradients are rebuilt).
    [[nodiscard]] double checkpoint_bytes_per_param() const { return param_bytes + master_bytes + optimizer_bytes; }
    // Adam's update reads gradients, master weights and moments and writes master weights,
    // moments and the working copy: the HBM traffic of one step per parameter.
    [[nodiscard]] double update_traffic_bytes_per_param() const {
        return grad_bytes + 2 * (master_bytes + optimizer_bytes) + param_bytes;
    }
    // With the optimizer on the host, everything but the working copy crosses the host link once.
    [[nodiscard]] double offload_traffic_bytes_per_param() const { return grad_bytes + master_bytes + optimizer_bytes; }

    // Mixed-precision Adam as Megatron and most frameworks run it: bf16 weights and gradients,
    // fp32 master weights and moments (16 bytes per parameter).
    [[nodiscard]] static TrainingPrecision mixed_precision_adam() {
        return {bytes_per_element(Dtype::bf16), bytes_per_element(Dtype::bf16), bytes_per_element(Dtype::fp32),
                2 * bytes_per_element(Dtype::fp32)};
    }
    // Megatron's default: gradients accumulated in fp32 (main_grad) beside bf16 weights, fp32
    // master weights and moments (18 bytes per parameter).
    [[nodiscard]] static TrainingPrecision fp32_gradient_accumulation() {
        return {bytes_per_element(Dtype::bf16), bytes_per_element(Dtype::fp32), bytes_per_element(Dtype::fp32),
                2 * bytes_per_element(Dtype::fp32)};
    }
    // The scaling book's convention: bf16 weights and two fp32 moments only (10 bytes per parameter).
    [[nodiscard]] static TrainingPrecision bf16_params_fp32_moments() {
        return {bytes_per_element(Dtype::bf16), 0, 0, 2 * bytes_per_element(Dtype::fp32)};
    }
};

[[nodiscard]] inline double training_state_bytes(double params, const TrainingPrecision& precision) {
    return params * precision.bytes_per_param();
}

// Chips whose HBM together holds `bytes` (fractional: a lower bound before any other use of memory).
[[nodiscard]] inline double chips_to_hold(double bytes, double hbm_bytes_per_chip) { return bytes / hbm_bytes_per_chip; }

}  // namespace ridgeline
