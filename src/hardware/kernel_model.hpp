#pragma once
// What real kernels reach on a chip, measured (hardware files, "kernels"): GEMMs by dtype and
// rows, attention by kernel family and pass, memory-bound kernels by name. Fitted to kernel
// measurements only (`ridgeline fit --like`, calibration/kernel_fit); the file says where each block comes from.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace ridgeline {

// A GEMM of M rows reaches peak_fraction x M / (M + half_rows) of the dtype's peak.
struct GemmKernel {
    double peak_fraction = 0;
    double half_rows = 0;
};

// Fused attention reaches peak_fraction x S / (S + half_seq) of the bf16 peak at sequence S.
struct AttentionPass {
    double peak_fraction = 0;
    double half_seq = 0;
};

struct AttentionFamily {
    std::string name;  // flash-attention-2, cudnn, ...
    AttentionPass forward, backward;
};

// A memory-bound kernel moves its bytes at this fraction of HBM bandwidth, and takes at least
// floor_s however few bytes it moves: launch, a few DRAM round trips, a reduction's serial steps
// (measured at decode's batch sizes; a kernel the chip file gives none takes the copy's, 0 without).
struct MemoryBoundKernel {
    std::string name;  // rmsnorm_fwd, swiglu_bwd, copy, ...
    double hbm_fraction = 0;
    double floor_s = 0;
};

struct KernelModel {
    std::string file;    // the chip file it was read from, for errors (empty when built in memory)
    std::string source;  // where the blocks come from (measurements, or a stated derivation)
    double gemm_launch_s = 0;  // a GEMM's fixed cost: launch, ramp, the first bytes' latency
    double gemm_hbm_fraction = 0;  // of HBM bandwidth, streaming a skinny GEMM's weights
    std::array<std::optional<GemmKernel>, kDtypeCount> gemm{};
    // Backward fp8 GEMMs promote partial sums to fp32 (split accumulation: Transformer Engine's
    // dgrad and wgrad, torchao's and XLA's gradients); the measured fp8 GEMMs accumulate fast.
    double fp8_split_accumulation_slowdown = 1;
    std::vector<AttentionFamily> attention;
    std::vector<MemoryBoundKernel> memory_bound;
};

}  // namespace ridgeline
