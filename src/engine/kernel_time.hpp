#pragma once
// Kernel times from the chip's measured kernel model (ChipSpec::kernels): what a GEMM, a fused
// attention pass or a memory-bound kernel takes on the real chip, where the roofline gives only
// the ideal bound. InputError naming the chip and field when the chip has no such measurement.
#include <string>

#include "engine/roofline.hpp"

namespace ridgeline {

enum class AttentionPassKind { forward, backward };

// launch + max(FLOPs at the dtype's measured fraction of peak (ramping with the rows),
// bytes at the measured weight-streaming bandwidth).
[[nodiscard]] double gemm_kernel_s(const ChipSpec& chip, const Gemm& gemm, const MatmulDtypes& dtypes);

// `flops` of one pass of `family` (flash-attention-2, cudnn ...) over sequences of `seq_len`.
[[nodiscard]] double attention_kernel_s(const ChipSpec& chip, const std::string& family, AttentionPassKind pass, double flops,
                                        double seq_len);

// `bytes` read and written by the memory-bound kernel `kernel` (rmsnorm_fwd, copy ...).
[[nodiscard]] double memory_kernel_s(const ChipSpec& chip, const std::string& kernel, double bytes);

}  // namespace ridgeline
