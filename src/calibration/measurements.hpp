#pragma once
// What a calibration run measured, with where and how (ridgeline.calibration/1 files). Reading is
// strict like every loader (missing, negative or unknown fields name the file and field); writing
// is atomic (temporary file, then rename), so an interrupted run leaves the last complete file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "calibration/kernel_measurements.hpp"
#include "calibration/sharded_case.hpp"
#include "collective/collective.hpp"

namespace ridgeline::calibration {

inline constexpr const char* kCalibrationFormat = "ridgeline.calibration/1";

struct Provenance {
    std::string host;
    std::string cpu_model;
    std::int64_t cores = 0;
    double memory_bytes = 0;  // each device's memory: the host's (MemTotal), or the GPU's
    double cache_bytes = 0;   // last-level cache: the host's, or the GPU's L2
    std::string libraries;
    std::string date;         // UTC, ISO 8601
    std::string backend;
    std::int64_t devices = 0;
    std::string device;  // the accelerator each device is (cuda: the GPU's name); empty: host cores
};

struct GemmSample {  // fp32
    std::int64_t m = 0, k = 0, n = 0;
    double time_s = 0;
};
struct CopySample {
    double bytes = 0;  // copied (read once and written once)
    double time_s = 0;
};
struct CollectiveSample {
    CollectiveKind kind = CollectiveKind::all_gather;
    std::int64_t devices = 0;
    double bytes = 0;  // collective_cost's convention
    double time_s = 0;
};
struct ShardedSample {
    ShardedCase shape;
    double time_s = 0;
};

struct Measurements {
    Provenance provenance;
    std::vector<GemmSample> gemms;
    std::vector<CopySample> copies;
    std::vector<CollectiveSample> collectives;
    std::vector<ShardedSample> sharded;  // held out from fitting: for validation only
    // Tensor-core GEMMs in the dtypes LLMs run (cuda), for a kernel model: fit --like CHIP.
    KernelMeasurements kernels;
};

// The kernel measurements of a calibration run: its tensor-core GEMMs and the bandwidth of its
// copies that left the cache (read plus written).
[[nodiscard]] KernelMeasurements kernel_measurements_of(const Measurements& measurements);

[[nodiscard]] Measurements load_measurements(const std::filesystem::path& path);
[[nodiscard]] std::string measurements_json(const Measurements& measurements);

// The host this runs on, from /proc and uname (empty or zero where unknown).
[[nodiscard]] Provenance host_provenance();

}  // namespace ridgeline::calibration
