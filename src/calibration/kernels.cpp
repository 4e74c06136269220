#include "calibration/kernels.hpp"

#include <Eigen/Core>

#ifdef RIDGELINE_HAVE_OPENBLAS
#include <cblas.h>

#include <mutex>
#endif

namespace ridgeline::calibration {

#ifndef RIDGELINE_HAVE_OPENBLAS
namespace {

template <int Order>
using Mat = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Order>>;
using Out = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <int AOrder, int BOrder>
void product(const float* a, const float* b, float* c, Eigen::Index m, Eigen::Index k, Eigen::Index n) {
    Out(c, m, n).noalias() = Mat<AOrder>(a, m, k) * Mat<BOrder>(b, k, n);
}

}  // namespace
#endif

void matmul(const float* a, Layout a_layout, const float* b, Layout b_layout, float* c, std::int64_t m, std::int64_t k,
            std::int64_t n) {
#ifdef RIDGELINE_HAVE_OPENBLAS
    // One BLAS thread: each calibration device is one worker thread on its own core.
    static std::once_flag single_threaded;
    std::call_once(single_threaded, [] { openblas_set_num_threads(1); });
    const bool a_rows = a_layout == Layout::row_major, b_rows = b_layout == Layout::row_major;
    const auto mi = static_cast<blasint>(m), ki = static_cast<blasint>(k), ni = static_cast<blasint>(n);
    cblas_sgemm(CblasRowMajor, a_rows ? CblasNoTrans : CblasTrans, b_rows ? CblasNoTrans : CblasTrans, mi, ni, ki, 1.0F, a,
                a_rows ? ki : mi, b, b_rows ? ni : ki, 0.0F, c, ni);
#else
    const auto mi = static_cast<Eigen::Index>(m), ki = static_cast<Eigen::Index>(k), ni = static_cast<Eigen::Index>(n);
    constexpr int R = Eigen::RowMajor, C = Eigen::ColMajor;
    const bool ar = a_layout == Layout::row_major, br = b_layout == Layout::row_major;
    if (ar && br) product<R, R>(a, b, c, mi, ki, ni);
    else if (ar) product<R, C>(a, b, c, mi, ki, ni);
    else if (br) product<C, R>(a, b, c, mi, ki, ni);
    else product<C, C>(a, b, c, mi, ki, ni);
#endif
}

std::string gemm_library() {
#ifdef RIDGELINE_HAVE_OPENBLAS
    return openblas_get_config();  // "OpenBLAS 0.3.21 ..."
#else
    return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
           std::to_string(EIGEN_MINOR_VERSION);
#endif
}

}  // namespace ridgeline::calibration
