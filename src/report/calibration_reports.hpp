#pragma once
// The faces of calibration results: the fitted chip description (ridgeline.chip/1, with the fit
// as the source of every value), the fit's residuals, and the held-out validation.
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "calibration/holdout.hpp"

namespace ridgeline::report {

// A chip file every command loads with --hardware FILE. `origin`: the measurements file.
[[nodiscard]] std::string fitted_chip_json(const ChipSpec& chip, const calibration::CalibrationFit& fit,
                                           const calibration::Provenance& provenance, const std::string& origin);
[[nodiscard]] std::string fit_table(const ChipSpec& chip, const calibration::CalibrationFit& fit);

[[nodiscard]] std::string holdout_table(const std::vector<calibration::CasePrediction>& cases,
                                        const calibration::HoldoutSummary& summary);
// Schema ridgeline.calibration-validation/1: `cases` and `summary`, and where the files went.
[[nodiscard]] std::string holdout_json(const std::vector<calibration::CasePrediction>& cases,
                                       const calibration::HoldoutSummary& summary, const std::string& measurements_path,
                                       const std::string& hardware_path);

}  // namespace ridgeline::report
