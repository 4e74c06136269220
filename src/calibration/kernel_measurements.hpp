#pragma once
// Kernels as LLMs run them, measured on one device (ridgeline.kernel-measurements/1: the format of
// tests/data/reference/gpu-kernels-h100.json, and of the "kernels" part a calibration file holds):
// tensor-core GEMMs by dtype and shape, fused attention by kernel family and pass, copies and
// memory-bound kernels. Reading is strict like every loader: a missing, negative or unknown field
// names the file and field.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace ridgeline::io {
class JsonObject;
}

namespace ridgeline::calibration {

inline constexpr const char* kKernelMeasurementsFormat = "ridgeline.kernel-measurements/1";

struct KernelGemmSample {
    Dtype dtype = Dtype::bf16;  // of the inputs (fp8: e4m3 or e5m2 inputs, a wider output)
    std::int64_t m = 0, k = 0, n = 0;
    double time_s = 0;
};

struct AttentionSample {
    std::string family;  // flash-attention-2, cudnn, ...
    bool causal = true;
    std::int64_t batch = 0, q_heads = 0, kv_heads = 0, head_dim = 0, seq = 0;
    double forward_s = 0;
    double forward_backward_s = 0;
};

struct MemoryBoundSample {
    std::string kernel;  // rmsnorm_fwd, swiglu_bwd, ... (the names a kernels block uses)
    double bytes = 0;    // read plus written
    double seconds = 0;
};

struct KernelMeasurements {
    std::string device;    // what ran them, as the file says
    std::string software;
    std::string date;
    std::vector<KernelGemmSample> gemms;
    std::vector<AttentionSample> attention;
    std::vector<double> copy_Bps;  // device-to-device copies, bytes read plus written per second
    std::vector<MemoryBoundSample> memory_bound;
    [[nodiscard]] bool empty() const { return gemms.empty() && attention.empty() && copy_Bps.empty() && memory_bound.empty(); }
};

// A whole ridgeline.kernel-measurements/1 file.
[[nodiscard]] KernelMeasurements load_kernel_measurements(const std::filesystem::path& path);
// The same fields read from an object (a file's root, or a calibration file's "kernels").
[[nodiscard]] KernelMeasurements read_kernel_measurements(io::JsonObject& object);

}  // namespace ridgeline::calibration
