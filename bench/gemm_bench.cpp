// The calibration GEMM path (calibration/kernels.cpp: OpenBLAS when built with it, else Eigen) against
// OpenBLAS sgemm called directly and Eigen's own GEMM, one thread each, on the same shapes in the same
// run: GFLOP/s of each and their ratio. Exits 1 below the goal (geometric mean >= 0.8x OpenBLAS).
#include <algorithm>
#include <array>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "calibration/kernels.hpp"

#ifdef RIDGELINE_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

template <class F>
double best_s(F&& f) {
    f();
    double best = std::numeric_limits<double>::infinity();
    double spent = 0;
    for (int rep = 0; rep < 20 && (rep < 3 || spent < 0.3); ++rep) {
        const auto start = std::chrono::steady_clock::now();
        f();
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::min(best, t);
        spent += t;
    }
    return best;
}

}  // namespace

int main() {
#ifndef RIDGELINE_HAVE_OPENBLAS
    std::printf("OpenBLAS not found at configure time: no baseline to compare with\n");
    return 1;
#else
    openblas_set_num_threads(1);
    const std::vector<std::array<int, 3>> shapes = {{256, 256, 256},   {512, 512, 512},  {1024, 1024, 1024},
                                                    {64, 1024, 1024},  {1024, 64, 1024}, {1024, 1024, 64},
                                                    {2048, 512, 512}};
    std::printf("calibration GEMM path: %s\n", ridgeline::calibration::gemm_library().c_str());
    std::printf("%-18s %14s %16s %14s %8s\n", "m x k x n", "path GFLOP/s", "OpenBLAS GFLOP/s", "Eigen GFLOP/s", "ratio");
    double worst = std::numeric_limits<double>::infinity(), log_sum = 0;
    for (const auto& [m, k, n] : shapes) {
        std::vector<float> a(static_cast<std::size_t>(m) * k, 0.5f), b(static_cast<std::size_t>(k) * n, 0.25f),
            c(static_cast<std::size_t>(m) * n);
        const double flops = 2.0 * m * k * n;
        const double eigen_only_s = best_s([&] {
            using Map = Eigen::Map<Eigen::MatrixXf>;
            Map(c.data(), m, n).noalias() = Map(a.data(), m, k) * Map(b.data(), k, n);
        });
        const double eigen_s = best_s([&] {
            ridgeline::calibration::matmul(a.data(), ridgeline::calibration::Layout::col_major, b.data(),
                                           ridgeline::calibration::Layout::col_major, c.data(), m, k, n);
        });
        const double blas_s = best_s([&] {
            cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f, c.data(), m);
        });
        const double ratio = blas_s / eigen_s;  // path throughput / OpenBLAS throughput
        worst = std::min(worst, ratio);
        log_sum += std::log(ratio);
        char label[32];
        std::snprintf(label, sizeof label, "%dx%dx%d", m, k, n);
        std::printf("%-18s %14.1f %16.1f %14.1f %8.2f\n", label, flops / eigen_s / 1e9, flops / blas_s / 1e9, flops / eigen_only_s / 1e9,
                    ratio);
    }
    const double geomean = std::exp(log_sum / static_cast<double>(shapes.size()));
    const bool met = geomean >= 0.8;
    std::printf("calibration path / OpenBLAS throughput: geometric mean %.2fx, worst %.2fx (goal: geometric mean >= 0.80x): %s\n",
                geomean, worst, met ? "met" : "NOT met");
    return met ? 0 : 1;
#endif
}
