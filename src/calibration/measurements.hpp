#pragma once
// What a calibration run measured, with where and how (ridgeline.calibration/1 files). Reading is
// strict like every loader (missing, negative or unknown fields name the file and field); writing
// is atomic (temporary file, then rename), so an interrupted run leaves the last complete file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "calibration/sharded_case.hpp"
#include "collective/collective.hpp"

namespace ridgeline::calibration {

struct Provenance {
    std::string host;
    std::string cpu_model;
    std::int64_t cores = 0;
    double memory_bytes = 0;  // host memory (MemTotal)
    double cache_bytes = 0;   // last-level cache
    std::string libraries;
    std::string date;         // UTC, ISO 8601
    std::string backend;
    std::int64_t devices = 0;
};

struct GemmSample {
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
};

[[nodiscard]] Measurements load_measurements(const std::filesystem::path& path);
[[nodiscard]] std::string measurements_json(const Measurements& measurements);

// The host this runs on, from /proc and uname (empty or zero where unknown).
[[nodiscard]] Provenance host_provenance();

}  // namespace ridgeline::calibration
