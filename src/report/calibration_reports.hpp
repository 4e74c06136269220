#pragma once
// The faces of calibration results: the fitted chip description (ridgeline.chip/1, with the fit
// as the source of every value), the fit's residuals, and the held-out validation.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "calibration/fit.hpp"
#include "calibration/holdout.hpp"
#include "calibration/kernel_fit.hpp"

namespace ridgeline::report {

// A chip file every command loads with --hardware FILE. `origin`: the measurements file;
// `system`: its default system (none when empty).
[[nodiscard]] std::string fitted_chip_json(const ChipSpec& chip, const calibration::CalibrationFit& fit,
                                           const calibration::Provenance& provenance, const std::string& origin,
                                           const std::string& system = "");
[[nodiscard]] std::string fit_table(const ChipSpec& chip, const calibration::CalibrationFit& fit);

// A datasheet chip with a measured kernel model: `like` (its file's document) with the measured
// parts of its "kernels" replaced, each part saying where it comes from, under a new name. The
// GEMMs must be measured or in `like` already.
struct MeasuredChip {
    std::string name;
    std::string system;  // default_system; empty: like's
    std::string origin;  // the measurements file
    calibration::KernelMeasurements measured;
    double device_memory_bytes = 0;  // the device's own memory, where the measurements read it
};
[[nodiscard]] std::string measured_chip_json(const nlohmann::ordered_json& like, const calibration::KernelFit& fit, const MeasuredChip& what);
// Each fitted part's parameters and residuals.
[[nodiscard]] std::string kernel_fit_table(const calibration::KernelFit& fit);

[[nodiscard]] std::string holdout_table(const std::vector<calibration::CasePrediction>& cases,
                                        const calibration::HoldoutSummary& summary);
// Schema ridgeline.calibration-validation/1: `cases` and `summary`, and where the files went.
[[nodiscard]] std::string holdout_json(const std::vector<calibration::CasePrediction>& cases,
                                       const calibration::HoldoutSummary& summary, const std::string& measurements_path,
                                       const std::string& hardware_path);

}  // namespace ridgeline::report
