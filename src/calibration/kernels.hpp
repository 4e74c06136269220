#pragma once
// The local arithmetic of a CPU device: single-threaded fp32 GEMMs through OpenBLAS where it is
// installed, else Eigen. Kept in one
// translation unit (built for the host's instruction set) so that no other file instantiates
// Eigen's float GEMM with different flags.
#include <cstdint>
#include <string>

namespace ridgeline::calibration {

enum class Layout { row_major, col_major };

// C[m, n] (row-major) = A[m, k] . B[k, n], each operand in the given layout.
void matmul(const float* a, Layout a_layout, const float* b, Layout b_layout, float* c, std::int64_t m, std::int64_t k,
            std::int64_t n);

// The library the GEMMs run on, with its version (OpenBLAS when built with it and found, else Eigen).
[[nodiscard]] std::string gemm_library();

}  // namespace ridgeline::calibration
