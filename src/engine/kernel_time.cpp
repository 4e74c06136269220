#include "engine/kernel_time.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace ridgeline {

namespace {

const KernelModel& kernels_of(const ChipSpec& chip) {
    if (!chip.kernels) throw InputError(chip.name, "kernels", "no measured kernel model for this chip");
    return *chip.kernels;
}

std::string names_of(const auto& entries) {
    std::string names;
    for (const auto& e : entries) names += (names.empty() ? "" : ", ") + e.name;
    return names;
}

}  // namespace

double gemm_kernel_s(const ChipSpec& chip, const Gemm& g, const MatmulDtypes& dtypes) {
    const KernelModel& k = kernels_of(chip);
    const auto& kernel = k.gemm[index_of(dtypes.compute)];
    if (!kernel) throw InputError(chip.name, "kernels.gemm.dtypes." + std::string(dtype_name(dtypes.compute)), "no measured GEMMs in this dtype");
    const double flops = 2.0 * g.rows * g.contract * g.cols * g.instances;
    const double bytes = (g.rows * g.contract + g.rows * g.cols) * g.instances * bytes_per_element(dtypes.activations) +
                         g.weight_elements * bytes_per_element(dtypes.weights);
    const double rate = chip.peak_flops(dtypes.compute) * kernel->peak_fraction * g.rows / (g.rows + kernel->half_rows);
    return k.gemm_launch_s + std::max(flops / rate, bytes / (chip.hbm_bw_Bps * k.gemm_hbm_fraction));
}

double attention_kernel_s(const ChipSpec& chip, const std::string& family, AttentionPassKind pass, double flops, double seq_len) {
    const KernelModel& k = kernels_of(chip);
    const auto it = std::find_if(k.attention.begin(), k.attention.end(), [&](const AttentionFamily& f) { return f.name == family; });
    if (it == k.attention.end())
        throw InputError(chip.name, "kernels.attention." + family, "no measurements of this attention kernel (measured: " + names_of(k.attention) + ")");
    const AttentionPass& p = pass == AttentionPassKind::forward ? it->forward : it->backward;
    return flops / (chip.peak_flops(Dtype::bf16) * p.peak_fraction * seq_len / (seq_len + p.half_seq));
}

double memory_kernel_s(const ChipSpec& chip, const std::string& kernel, double bytes) {
    const KernelModel& k = kernels_of(chip);
    const auto it = std::find_if(k.memory_bound.begin(), k.memory_bound.end(), [&](const MemoryBoundKernel& m) { return m.name == kernel; });
    if (it == k.memory_bound.end())
        throw InputError(chip.name, "kernels.memory_bound." + kernel, "no measurement of this kernel (measured: " + names_of(k.memory_bound) + ")");
    return bytes / (chip.hbm_bw_Bps * it->hbm_fraction);
}

}  // namespace ridgeline
