#pragma once
// A chip as the cost model sees it: peak arithmetic per dtype, HBM, and the bandwidth of each
// interconnect level it attaches to. Plain values, parsed once (hardware/catalog.cpp).
#include <array>
#include <optional>
#include <string>

#include "core/dtype.hpp"
#include "hardware/kernel_model.hpp"

namespace ridgeline {

// TPU inter-chip interconnect: a torus whose links each carry link_bw one way.
struct IciSpec {
    int links_per_chip = 0;
    int torus_axes = 0;
    double link_bw_Bps_one_way = 0;
    double hop_latency_s = 0;
    // Bandwidth along one torus axis using both directions of a wraparound ring (the book's W_ici).
    [[nodiscard]] double axis_bw_Bps_bidirectional() const { return 2.0 * link_bw_Bps_one_way; }
};

// GPU NVLink through NVSwitch: every GPU reaches any other in its domain at its full egress.
// collective_fraction: the share of the link rate NCCL's collectives reach on it (protocol
// overhead), measured; 1 where no measurement is given.
struct NvlinkSpec {
    int links_per_chip = 0;
    double bw_per_chip_Bps_one_way = 0;
    double hop_latency_s = 0;
    double collective_fraction = 1.0;
};

// The network between scale-up domains: DCN between TPU slices, InfiniBand/Ethernet between GPU nodes.
struct ScaleOutSpec {
    std::string kind;
    double bw_per_chip_Bps_one_way = 0;
    double latency_s = 0;
    double collective_fraction = 1.0;
};

// The vector (non-matmul) arithmetic units: SMs' CUDA cores on a GPU, the VPU of each TPU core.
// Elementwise work (norms, softmax, activations) runs here, far below the matmul peak.
struct VectorUnitSpec {
    int units = 0;                 // SMs, or TensorCores
    int lanes_per_unit = 0;        // FP32 lanes (CUDA cores) or VPU ALUs per unit
    double clock_hz = 0;
    double shared_memory_per_unit_bytes = 0;  // SMEM per SM, VMEM per core
    [[nodiscard]] double lanes() const { return static_cast<double>(units) * lanes_per_unit; }
    // One operation per lane per cycle; an FMA counts as two FLOPs where `fma` is set.
    [[nodiscard]] double flops_per_s(bool fma) const { return lanes() * clock_hz * (fma ? 2.0 : 1.0); }
    [[nodiscard]] double shared_memory_bytes() const { return units * shared_memory_per_unit_bytes; }
};

// How close real kernels come to the roofline on this chip (hardware files, "efficiency").
struct ChipEfficiency {
    double matmul_max = 1.0;         // best fraction of peak a large 16-bit GEMM reaches
    double matmul_max_fp8 = 1.0;     // the same for 8-bit GEMMs
    double matmul_half_dim = 0.0;    // a GEMM dimension this small halves the efficiency
    double attention = 1.0;          // fused attention kernels at long sequences, fraction of peak
    double attention_half_seq = 0.0; // a sequence this short halves the attention efficiency
    double hbm = 1.0;                // achievable fraction of HBM bandwidth
    double collective = 1.0;         // achievable fraction of link bandwidth in collectives
    double kernel_overhead_s = 0.0;  // fixed cost per kernel launch
    // Times a GEMM's output crosses memory: 1 where it is written once; more where a library
    // clears it first and accumulates into it, on caches that read a line before writing it.
    double matmul_output_passes = 1.0;
    // Per collective kind, in CollectiveKind's order (all_gather, reduce_scatter, all_reduce,
    // all_to_all, permute, broadcast): the fraction of link bandwidth reached by messages
    // streaming from memory, and by messages whose working set (twice the message) fits in
    // on-chip memory (above 1 where the cache outruns the link).
    std::array<double, 6> collective_streaming{1, 1, 1, 1, 1, 1};
    std::array<double, 6> collective_cached{1, 1, 1, 1, 1, 1};
};

// The shapes and sizes a calibrated description was fitted on ("measured_range"; absent for
// datasheet chips). Queries outside it are extrapolations, and the CLI says so.
struct MeasuredRange {
    double gemm_dim_min = 0, gemm_dim_max = 0;
    double message_bytes_min = 0, message_bytes_max = 0;
    double devices_max = 0;
};

enum class ChipKind { tpu, gpu };

// Board power with its sources in the chip file: the most the board draws (TDP), and idle where
// a source gives it.
struct ChipPower {
    std::optional<double> idle_w;
    double max_w = 0;
};

struct ChipSpec {
    std::string name;
    std::string description;
    ChipKind kind = ChipKind::tpu;
    std::string default_system;  // empty when none
    std::array<double, kDtypeCount> peak_flops_per_s{};  // 0 where the chip has no such arithmetic
    double hbm_bytes = 0;
    double hbm_bw_Bps = 0;
    double on_chip_memory_bytes = 0;
    std::optional<VectorUnitSpec> vector_unit;
    double host_link_Bps = 0;
    // One chip's step time does not vary from another's (a statically scheduled chip at a fixed
    // clock): the chips of one domain never wait for one another; only whole domains do.
    bool deterministic_step_time = false;
    std::optional<IciSpec> ici;
    std::optional<NvlinkSpec> nvlink;
    ScaleOutSpec scale_out;
    std::optional<double> price_usd_per_chip_hour;
    std::optional<ChipPower> power;
    ChipEfficiency efficiency;  // ideal (all 1, no overheads) when the file gives none
    bool efficiency_from_file = false;  // an efficiency block: calibrated, or fitted on published runs
    std::optional<MeasuredRange> measured_range;
    std::optional<KernelModel> kernels;  // measured kernel efficiencies (absent: none measured yet)

    // Measured kernels or fitted efficiencies: what a step or a decode can be priced with. A chip
    // without either is a datasheet only (ridge points, collectives), never priced at the ideal.
    [[nodiscard]] bool has_kernel_data() const { return kernels.has_value() || efficiency_from_file; }
    [[nodiscard]] bool supports(Dtype dtype) const { return peak_flops_per_s[index_of(dtype)] > 0; }
    [[nodiscard]] double peak_flops(Dtype dtype) const { return peak_flops_per_s[index_of(dtype)]; }
    // Per-chip scale-up bandwidth that collectives inside a domain see (one way).
    [[nodiscard]] double scale_up_bw_Bps_one_way() const {
        if (nvlink) return nvlink->bw_per_chip_Bps_one_way;
        if (ici) return ici->link_bw_Bps_one_way * ici->links_per_chip;
        return 0;
    }
};

}  // namespace ridgeline
