#pragma once
// The roofline of one chip: time = max(FLOPs / peak, bytes / bandwidth), and which side of the
// ridge a piece of work is on. Pure functions of specs.
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "engine/bound.hpp"
#include "hardware/system.hpp"

namespace ridgeline {

struct RooflineTime {
    double flops = 0;
    double bytes = 0;
    double compute_s = 0;
    double memory_s = 0;
    double overhead_s = 0;  // a measured kernel's fixed cost (launch, ramp, first bytes' latency)
    [[nodiscard]] double intensity_flops_per_byte() const { return bytes > 0 ? flops / bytes : 0; }
    // Perfect overlap of compute and traffic, and none: the true time lies between the two.
    [[nodiscard]] double lower_bound_s() const { return (compute_s > memory_s ? compute_s : memory_s) + overhead_s; }
    [[nodiscard]] double upper_bound_s() const { return compute_s + memory_s + overhead_s; }
    [[nodiscard]] Bound bound() const { return compute_s >= memory_s ? Bound::compute : Bound::memory; }
};

[[nodiscard]] RooflineTime roofline_time(double flops, double bytes, double peak_flops_per_s, double bandwidth_Bps);

// [B, D] x [D, F] -> [B, F], reading both inputs and writing the output once from HBM.
// The arithmetic runs at the peak of `compute_dtype`.
struct MatmulShape {
    double rows = 0;      // B: tokens
    double contract = 0;  // D
    double cols = 0;      // F
};
struct MatmulDtypes {
    Dtype activations = Dtype::bf16;
    Dtype weights = Dtype::bf16;
    Dtype compute = Dtype::bf16;
};
[[nodiscard]] RooflineTime matmul_roofline(const ChipSpec& chip, const MatmulShape& shape, const MatmulDtypes& dtypes);

// The chip's fraction of peak for an m x k x n GEMM: its best large-GEMM efficiency for the dtype,
// scaled down for dimensions near the tile size.
[[nodiscard]] double matmul_efficiency(const ChipEfficiency& efficiency, Dtype dtype, double m, double k, double n);

// `instances` GEMMs [rows, contract] x [contract, cols] as the chip runs them. Where the chip's
// kernels are measured ("kernels"): the dtype's measured fraction of peak, ramping with the rows,
// the traffic at the measured weight-streaming bandwidth, plus the measured launch cost. Else the
// chip's efficiency block (fitted on published runs). Every command prices GEMMs here.
// InputError naming the chip and field when the kernels leave out the dtype.
struct Gemm {
    double rows = 0, contract = 0, cols = 0;
    double instances = 1;
    double weight_elements = 0;  // weights read (all instances)
};
[[nodiscard]] RooflineTime gemm_time(const ChipSpec& chip, const Gemm& gemm, const MatmulDtypes& dtypes);

// A GEMM's backward pass: where kernels are measured, the input gradient [rows, cols] x [cols,
// contract] (reading the weights) and the weight gradient [contract, rows] x [rows, cols] (writing
// them), each a GEMM of its own shape; else twice the forward GEMM.
[[nodiscard]] double gemm_backward_s(const ChipSpec& chip, const Gemm& gemm, const MatmulDtypes& dtypes);

// Fused attention, one pass: `flops` at the measured fraction of peak of the kernel `family`
// (flash-attention-2, cudnn ...; lower at short causal sequences, `causal_seq_len` 0 for one query
// per sequence, as in decode), `bytes` (KV cache and activations) at the achievable HBM bandwidth.
// Chips without measured kernels use their efficiency block, the backward pass at its FLOPs.
// InputError listing the measured families when the chip has none of that name.
enum class AttentionPassKind { forward, backward };
// The first of `families` (a stack's, in its order of preference) that the chip has measurements
// of; on a chip with no kernel model, the first. InputError listing the measured ones when none is.
[[nodiscard]] const std::string& attention_family(const ChipSpec& chip, const std::vector<std::string>& families);
[[nodiscard]] RooflineTime attention_time(const ChipSpec& chip, const std::string& family, AttentionPassKind pass, double flops,
                                          double bytes, double causal_seq_len);

// A memory-bound op moving `bytes` in `launches` kernels: at the measured rate of `kernel`
// (rmsnorm_fwd, copy ...) where the chip's kernels have it, else at the efficiency block's fraction
// of HBM bandwidth; never under `launches` times the kernel's measured floor (the copy's where the
// kernel has none), which is what small decode batches pay.
[[nodiscard]] double memory_bound_s(const ChipSpec& chip, const std::string& kernel, double bytes, double launches = 1);

// The token batch above which a weight-streaming matmul (B << D, F) is compute-bound:
// intensity 2B / weight_bytes against peak / HBM bandwidth.
[[nodiscard]] double critical_batch_tokens(const ChipSpec& chip, const MatmulDtypes& dtypes);

// Critical arithmetic intensity (FLOPs per byte moved) against each memory and network level.
struct RidgePoint {
    std::string level;        // "hbm", "ici axis (bidirectional)", "nvlink", "scale-out", ...
    std::string bandwidth_meaning;
    double bandwidth_Bps = 0;
    Dtype dtype = Dtype::bf16;
    double intensity_flops_per_byte = 0;
};
[[nodiscard]] std::vector<RidgePoint> ridge_points(const Hardware& hardware);

// Peak FLOPs bought per dollar at the chip's hourly price; nullopt where the file gives no price.
[[nodiscard]] std::optional<double> peak_flops_per_usd(const ChipSpec& chip, Dtype dtype);

}  // namespace ridgeline
