#pragma once
// The JSON of kernel measurements, for the files that hold them (a kernel-measurements file, a
// calibration file's "kernels"). Included by those writers only: nlohmann stays out of the rest.
#include <nlohmann/json.hpp>

#include "calibration/kernel_measurements.hpp"

namespace ridgeline::calibration {

[[nodiscard]] nlohmann::ordered_json kernel_measurements_object(const KernelMeasurements& m);

}  // namespace ridgeline::calibration
