#pragma once
// `fit` as a request in and an outcome out: a chip description fitted to measurements, written
// atomically and read back as every command reads it. Two kinds of measurements:
//  - kernel measurements (a ridgeline.kernel-measurements/1 file, or a cuda calibration's
//    tensor-core GEMMs and copies) with `like`, a shipped chip whose datasheet (peaks, HBM,
//    interconnect, system) they complete: the written chip is that chip with a measured kernel model;
//  - a calibration file without `like`: every figure fitted (peak, memory, link), as the cpu and mpi
//    backends measure them.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "calibration/holdout.hpp"
#include "calibration/kernel_fit.hpp"
#include "hardware/system.hpp"

namespace ridgeline::app {

struct FitRequest {
    std::filesystem::path measurements;
    std::filesystem::path output;
    std::string name;    // default: calibrated-BACKEND, or LIKE-measured
    std::string like;    // a chip (name or file) whose datasheet the measured kernels complete
    std::string system;  // the system the chip is placed in (train, serve); default: like's
};

struct FitOutcome {
    Hardware hardware;  // the written chip as read back, with its system where it has one
    std::optional<calibration::CalibrationFit> calibration;  // a calibration file fitted whole
    std::optional<calibration::KernelFit> kernels;           // a kernel model fitted with `like`
    std::vector<calibration::CasePrediction> holdout;
    calibration::HoldoutSummary summary;
};

// The file of the chip `like` names (a catalog name or a path); InputError naming "like" when unknown.
[[nodiscard]] std::filesystem::path datasheet_file(const std::string& like, const std::filesystem::path& data_dir);

// InputError naming the file and field (measurements, like, system) when it cannot be done.
[[nodiscard]] FitOutcome fit_chip(const FitRequest& request, const std::filesystem::path& data_dir);

}  // namespace ridgeline::app
