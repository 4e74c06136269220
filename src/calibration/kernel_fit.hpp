#pragma once
// A chip's kernel model (hardware files, "kernels") fitted to kernel measurements, priced by the
// engine's own gemm_time, attention_time and memory_bound_s, so that what is fitted is exactly
// what every command predicts with. Pure: measurements and the datasheet in, the model out.
//   GEMM       one launch cost and weight-streaming share of HBM bandwidth for all dtypes; per
//              dtype, the fraction of its datasheet peak and the rows at which half of it is reached
//   attention  per kernel family and pass, the fraction of the bf16 peak and the half-fill sequence
//   memory     per kernel, the median measured share of HBM bandwidth ("copy" from the copies)
// Each part minimises the squared log ratio of predicted to measured time.
#include <string>
#include <vector>

#include "calibration/holdout.hpp"
#include "calibration/kernel_measurements.hpp"
#include "hardware/chip.hpp"

namespace ridgeline::calibration {

struct PartResiduals {
    std::string part;  // "gemm bf16", "attention cudnn forward", ...
    int samples = 0;
    double median_abs = 0;  // |predicted / measured - 1|
    double max_abs = 0;
};

struct KernelFit {
    KernelModel model;  // the measured parts only (a dtype, family or kernel not measured is absent)
    std::vector<PartResiduals> residuals;
};

// `datasheet` gives the peaks and HBM bandwidth the fractions are of. InputError naming `origin`
// when a measured dtype has no datasheet peak, or when nothing can be fitted.
[[nodiscard]] KernelFit fit_kernels(const KernelMeasurements& measurements, const ChipSpec& datasheet, const std::string& origin);

// Each measured GEMM and attention pass as `chip` predicts it: the residuals of any chip's kernel
// model against measurements (a fitted one, or a shipped one checked against a new device).
[[nodiscard]] std::vector<PartResiduals> kernel_residuals(const KernelMeasurements& measurements, const ChipSpec& chip);

// Validation on a shape no fit saw: the GEMMs of the last weight shape measured (K x N), predicted
// by a model fitted to the others. InputError naming `origin` when fewer than two shapes were measured.
[[nodiscard]] std::vector<CasePrediction> predict_held_out_gemms(const KernelMeasurements& measurements, const ChipSpec& datasheet,
                                                                 const std::string& origin);

}  // namespace ridgeline::calibration
