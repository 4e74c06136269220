#include "engine/roofline.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "engine/cost.hpp"
#include "engine/step_model.hpp"

namespace ridgeline {

RooflineTime roofline_time(double flops, double bytes, double peak_flops_per_s, double bandwidth_Bps) {
    RooflineTime time;
    time.flops = flops;
    time.bytes = bytes;
    time.compute_s = flops / peak_flops_per_s;
    time.memory_s = bytes / bandwidth_Bps;
    return time;
}

RooflineTime matmul_roofline(const ChipSpec& chip, const MatmulShape& shape, const MatmulDtypes& dtypes) {
    const double flops = 2.0 * shape.rows * shape.contract * shape.cols;
    const double bytes = bytes_per_element(dtypes.activations) * shape.rows * shape.contract +
                         bytes_per_element(dtypes.weights) * shape.contract * shape.cols +
                         bytes_per_element(dtypes.activations) * shape.rows * shape.cols;
    return roofline_time(flops, bytes, chip.peak_flops(dtypes.compute), chip.hbm_bw_Bps);
}

double matmul_efficiency(const ChipEfficiency& e, Dtype dtype, double m, double k, double n) {
    const double best = bytes_per_element(dtype) <= 1.0 ? e.matmul_max_fp8 : e.matmul_max;
    if (e.matmul_half_dim <= 0) return best;
    // Tiles of about half_dim: a dimension of that size wastes half of each tile's work.
    const auto tile = [&](double x) { return x / (x + e.matmul_half_dim); };
    return best * tile(m) * tile(k) * tile(n);
}

namespace {

// Errors about a chip's kernel model name its file where it was read from one.
const std::string& kernels_origin(const ChipSpec& chip) {
    return chip.kernels && !chip.kernels->file.empty() ? chip.kernels->file : chip.name;
}

const GemmKernel* measured_gemm(const ChipSpec& chip, Dtype dtype) {
    if (!chip.kernels) return nullptr;
    // fp16 runs on the bf16 tensor-core path at the same rate.
    const Dtype measured_as = dtype == Dtype::fp16 ? Dtype::bf16 : dtype;
    const auto& kernel = chip.kernels->gemm[index_of(measured_as)];
    if (!kernel)
        throw InputError(kernels_origin(chip), "kernels.gemm.dtypes." + std::string(dtype_name(dtype)),
                         "no measured GEMMs in this dtype (" + chip.name + ")");
    return &*kernel;
}

template <class Entries>
std::string names_of(const Entries& entries) {
    std::string names;
    for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.name;
    return names;
}

}  // namespace

RooflineTime gemm_time(const ChipSpec& chip, const Gemm& g, const MatmulDtypes& dtypes) {
    const ChipEfficiency& e = chip.efficiency;
    const double flops = 2.0 * g.rows * g.contract * g.cols * g.instances;
    if (const GemmKernel* kernel = measured_gemm(chip, dtypes.compute)) {
        const KernelModel& k = *chip.kernels;
        const double bytes = (g.rows * g.contract + g.rows * g.cols) * g.instances * bytes_per_element(dtypes.activations) +
                             g.weight_elements * bytes_per_element(dtypes.weights);
        const double rate = chip.peak_flops(dtypes.compute) * kernel->peak_fraction * g.rows / (g.rows + kernel->half_rows);
        RooflineTime t = roofline_time(flops, bytes, rate, chip.hbm_bw_Bps * k.gemm_hbm_fraction);
        t.overhead_s = k.gemm_launch_s;
        return t;
    }
    const double bytes = (g.rows * g.contract + e.matmul_output_passes * g.rows * g.cols) * g.instances *
                             bytes_per_element(dtypes.activations) +
                         g.weight_elements * bytes_per_element(dtypes.weights);
    return roofline_time(flops, bytes,
                         chip.peak_flops(dtypes.compute) * matmul_efficiency(e, dtypes.compute, g.rows, g.contract, g.cols),
                         chip.hbm_bw_Bps * e.hbm);
}

double gemm_backward_s(const ChipSpec& chip, const Gemm& g, const MatmulDtypes& dtypes) {
    if (!chip.kernels) return kMatmulBackwardRatio * gemm_time(chip, g, dtypes).lower_bound_s();
    const double accumulation = dtypes.compute == Dtype::fp8 ? chip.kernels->fp8_split_accumulation_slowdown : 1.0;
    return accumulation * (gemm_time(chip, {g.rows, g.cols, g.contract, g.instances, g.weight_elements}, dtypes).lower_bound_s() +
                           gemm_time(chip, {g.contract, g.rows, g.cols, g.instances, 0.0}, dtypes).lower_bound_s());
}

const std::string& attention_family(const ChipSpec& chip, const std::vector<std::string>& families) {
    if (families.empty()) throw InputError(chip.name, "attention", "the stack names no attention kernel");
    if (!chip.kernels) return families.front();
    const auto& measured = chip.kernels->attention;
    for (const std::string& family : families)
        if (std::any_of(measured.begin(), measured.end(), [&](const AttentionFamily& f) { return f.name == family; })) return family;
    std::string wanted;
    for (const std::string& family : families) wanted += (wanted.empty() ? "" : ", ") + family;
    throw InputError(kernels_origin(chip), "kernels.attention." + families.front(),
                     "no measurements of the stack's attention kernels (" + wanted + "; measured: " + names_of(measured) + ")");
}

RooflineTime attention_time(const ChipSpec& chip, const std::string& family, AttentionPassKind pass, double flops, double bytes,
                            double causal_seq_len) {
    const ChipEfficiency& e = chip.efficiency;
    if (chip.kernels) {
        const KernelModel& k = *chip.kernels;
        const auto it = std::find_if(k.attention.begin(), k.attention.end(), [&](const AttentionFamily& f) { return f.name == family; });
        if (it == k.attention.end())
            throw InputError(kernels_origin(chip), "kernels.attention." + family,
                             "no measurements of this attention kernel (measured: " + names_of(k.attention) + ")");
        const AttentionPass& p = pass == AttentionPassKind::forward ? it->forward : it->backward;
        const double fill = causal_seq_len > 0 ? causal_seq_len / (causal_seq_len + p.half_seq) : 1.0;
        return roofline_time(flops, bytes, chip.peak_flops(Dtype::bf16) * p.peak_fraction * fill, chip.hbm_bw_Bps * k.gemm_hbm_fraction);
    }
    // Flash-attention tiles are poorly filled at short sequences (and the causal mask wastes a larger share).
    const double seq_fill =
        e.attention_half_seq > 0 && causal_seq_len > 0 ? causal_seq_len / (causal_seq_len + e.attention_half_seq) : 1.0;
    return roofline_time(flops, bytes, chip.peak_flops(Dtype::bf16) * e.attention * seq_fill, chip.hbm_bw_Bps * e.hbm);
}

double memory_bound_s(const ChipSpec& chip, const std::string& kernel, double bytes, double launches) {
    if (chip.kernels) {
        const auto& measured = chip.kernels->memory_bound;
        const auto it = std::find_if(measured.begin(), measured.end(), [&](const MemoryBoundKernel& m) { return m.name == kernel; });
        if (it == measured.end())
            throw InputError(kernels_origin(chip), "kernels.memory_bound." + kernel, "no measurement of this kernel (measured: " + names_of(measured) + ")");
        return std::max(launches * it->floor_s, bytes / (chip.hbm_bw_Bps * it->hbm_fraction));
    }
    return bytes / (chip.hbm_bw_Bps * chip.efficiency.hbm);
}

double critical_batch_tokens(const ChipSpec& chip, const MatmulDtypes& dtypes) {
    // FLOPs 2BDF over weight bytes w*DF: intensity 2B/w must reach peak / bandwidth.
    return bytes_per_element(dtypes.weights) / 2.0 * chip.peak_flops(dtypes.compute) / chip.hbm_bw_Bps;
}

std::vector<RidgePoint> ridge_points(const Hardware& hardware) {
    const ChipSpec& chip = hardware.chip;
    struct Level {
        std::string name;
        std::string meaning;
        double bandwidth_Bps;
    };
    std::vector<Level> levels = {{"hbm", "HBM bandwidth", chip.hbm_bw_Bps}};
    if (chip.ici)
        levels.push_back({"ici", "one torus axis, both directions of a wraparound ring", chip.ici->axis_bw_Bps_bidirectional()});
    if (chip.nvlink) levels.push_back({"nvlink", "per-GPU NVLink egress", chip.nvlink->bw_per_chip_Bps_one_way});
    levels.push_back({"scale-out", chip.scale_out.kind + " egress per chip", chip.scale_out.bw_per_chip_Bps_one_way});
    // Hierarchical collectives spread a domain's data over all its chips' NICs (the book's node egress).
    if (hardware.system && hardware.system->scale_up.kind == ScaleUpSpec::Kind::switched) {
        const double domain = static_cast<double>(hardware.system->scale_up.domain_size);
        levels.push_back({"scale-out per domain", chip.scale_out.kind + " egress of a " +
                                                      std::to_string(hardware.system->scale_up.domain_size) + "-chip domain",
                          chip.scale_out.bw_per_chip_Bps_one_way * domain});
    }
    levels.push_back({"host", "host link (PCIe) per chip", chip.host_link_Bps});

    std::vector<RidgePoint> points;
    for (Dtype dtype : kAllDtypes) {
        if (!chip.supports(dtype) || dtype == Dtype::fp16) continue;
        for (const Level& level : levels)
            points.push_back({level.name, level.meaning, level.bandwidth_Bps, dtype,
                              chip.peak_flops(dtype) / level.bandwidth_Bps});
    }
    return points;
}

std::optional<double> peak_flops_per_usd(const ChipSpec& chip, Dtype dtype) {
    const std::optional<double> chip_second_usd = cost_usd(chip, 1.0, 1.0);
    if (!chip_second_usd) return std::nullopt;
    return chip.peak_flops(dtype) / *chip_second_usd;
}

}  // namespace ridgeline
