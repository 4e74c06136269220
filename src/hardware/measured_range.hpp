#pragma once
// Warnings for queries outside the range a calibrated chip description was fitted on: the model
// still answers, but it extrapolates, and the user should know.
#include <string>
#include <vector>

#include "hardware/chip.hpp"

namespace ridgeline {

// Empty for chips without a measured range, and for queries inside it. Zero arguments are not checked.
[[nodiscard]] inline std::vector<std::string> measured_range_warnings(const ChipSpec& chip, double gemm_dim_min,
                                                                      double gemm_dim_max, double message_bytes,
                                                                      double devices) {
    std::vector<std::string> warnings;
    if (!chip.measured_range) return warnings;
    const MeasuredRange& r = *chip.measured_range;
    const auto text = [](double value) { return std::to_string(static_cast<long long>(value)); };
    if (gemm_dim_min > 0 && gemm_dim_min < r.gemm_dim_min)
        warnings.push_back("GEMM dimension " + text(gemm_dim_min) + " is below the calibrated range [" + text(r.gemm_dim_min) +
                           ", " + text(r.gemm_dim_max) + "] of " + chip.name + ": extrapolating");
    if (gemm_dim_max > r.gemm_dim_max)
        warnings.push_back("GEMM dimension " + text(gemm_dim_max) + " is above the calibrated range [" + text(r.gemm_dim_min) +
                           ", " + text(r.gemm_dim_max) + "] of " + chip.name + ": extrapolating");
    if (message_bytes > 0 && (message_bytes < r.message_bytes_min || message_bytes > r.message_bytes_max))
        warnings.push_back("message of " + text(message_bytes) + " bytes is outside the calibrated range [" +
                           text(r.message_bytes_min) + ", " + text(r.message_bytes_max) + "] bytes of " + chip.name + ": extrapolating");
    if (devices > r.devices_max)
        warnings.push_back(text(devices) + " devices exceed the " + text(r.devices_max) + " that " + chip.name +
                           " was calibrated on: extrapolating");
    return warnings;
}

}  // namespace ridgeline
