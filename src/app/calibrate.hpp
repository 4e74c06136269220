#pragma once
// `calibrate` as a request in and an outcome out: measure on this hardware through a backend
// (the measurements file rewritten after every step), and with `validate` fit a chip
// description, write it beside the measurements, read it back as any command would and predict
// the held-out sharded cases with it. The CLI parses flags and prints.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "calibration/holdout.hpp"
#include "calibration/kernel_fit.hpp"
#include "calibration/sweep.hpp"

namespace ridgeline::app {

struct CalibrateRequest {
    std::string backend = "cpu";
    int devices = 1;
    double time_budget_s = 60;
    std::filesystem::path output = "calibration.json";
    bool validate = false;
    bool small = false;            // the short sweep (short budgets, sanitizer builds)
    bool force = false;            // replace an existing output (and fitted chip) file
    std::string arguments_fingerprint;  // ranks started with different arguments are refused
    // A GPU's validation: the chip whose datasheet its kernel model completes (fit_chip's like),
    // found in data_dir's catalog.
    std::string like;
    std::filesystem::path data_dir = ".";
};

// cpu and mpi: every figure fitted, held-out sharded cases; a GPU: its kernel model fitted into
// the datasheet of `like`, and the GEMMs of one weight shape predicted from the others.
struct CalibrationValidation {
    std::optional<calibration::CalibrationFit> fit;
    std::optional<calibration::KernelFit> kernels;
    std::filesystem::path chip_path;  // the fitted description, as written
    ChipSpec chip;                    // ... and as read back
    std::vector<calibration::CasePrediction> cases;
    calibration::HoldoutSummary summary;
};

struct CalibrateOutcome {
    bool leader = true;  // only the leading rank reports; the others return after measuring
    calibration::Measurements measurements;
    int passes = 0;
    int skipped = 0;
    std::optional<CalibrationValidation> validation;
};

// The fitted description's path: the measurements file's, ending in .chip.json.
[[nodiscard]] std::filesystem::path fitted_chip_path(const std::filesystem::path& measurements);

// InputError naming the request's field (backend, devices, time_budget) when it cannot run.
[[nodiscard]] CalibrateOutcome calibrate(const CalibrateRequest& request,
                                         const std::function<void(const calibration::StepReport&)>& progress);

}  // namespace ridgeline::app
