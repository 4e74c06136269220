#include "calibration/kernels.hpp"

#include <Eigen/Core>

#ifdef RIDGELINE_HAVE_OPENBLAS
#include <cblas.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#endif

#ifndef RIDGELINE_OPENBLAS_PATH
#define RIDGELINE_OPENBLAS_PATH ""
#endif

namespace ridgeline::calibration {

namespace {

template <int Order>
using Mat = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Order>>;
using Out = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <int AOrder, int BOrder>
void product(const float* a, const float* b, float* c, Eigen::Index m, Eigen::Index k, Eigen::Index n) {
    Out(c, m, n).noalias() = Mat<AOrder>(a, m, k) * Mat<BOrder>(b, k, n);
}

void eigen_matmul(const float* a, bool a_rows, const float* b, bool b_rows, float* c, std::int64_t m, std::int64_t k, std::int64_t n) {
    const auto mi = static_cast<Eigen::Index>(m), ki = static_cast<Eigen::Index>(k), ni = static_cast<Eigen::Index>(n);
    constexpr int R = Eigen::RowMajor, C = Eigen::ColMajor;
    if (a_rows && b_rows) product<R, R>(a, b, c, mi, ki, ni);
    else if (a_rows) product<R, C>(a, b, c, mi, ki, ni);
    else if (b_rows) product<C, R>(a, b, c, mi, ki, ni);
    else product<C, C>(a, b, c, mi, ki, ni);
}

#ifdef RIDGELINE_HAVE_OPENBLAS
// OpenBLAS is opened by the first calibration GEMM, not linked: loading it starts its thread pool,
// which costs every command CPU time though only calibration multiplies matrices here.
struct OpenBlas {
    decltype(&::cblas_sgemm) sgemm = nullptr;
    decltype(&::openblas_get_config) config = nullptr;
};

OpenBlas open_openblas() {
    // One BLAS thread, set before the library reads it: each calibration device is one worker on its own core.
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    void* handle = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr && *RIDGELINE_OPENBLAS_PATH != '\0') handle = dlopen(RIDGELINE_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
    OpenBlas blas;
    if (handle == nullptr) return blas;  // not installed where this binary runs: Eigen's GEMM
    blas.sgemm = reinterpret_cast<decltype(&::cblas_sgemm)>(dlsym(handle, "cblas_sgemm"));
    blas.config = reinterpret_cast<decltype(&::openblas_get_config)>(dlsym(handle, "openblas_get_config"));
    if (blas.sgemm == nullptr || blas.config == nullptr) return {};
    return blas;  // the handle stays open for the life of the process
}

const OpenBlas& openblas() {
    static std::once_flag once;
    static OpenBlas blas;
    std::call_once(once, [] { blas = open_openblas(); });
    return blas;
}
#endif

}  // namespace

void matmul(const float* a, Layout a_layout, const float* b, Layout b_layout, float* c, std::int64_t m, std::int64_t k,
            std::int64_t n) {
    const bool a_rows = a_layout == Layout::row_major, b_rows = b_layout == Layout::row_major;
#ifdef RIDGELINE_HAVE_OPENBLAS
    if (const OpenBlas& blas = openblas(); blas.sgemm != nullptr) {
        const auto mi = static_cast<blasint>(m), ki = static_cast<blasint>(k), ni = static_cast<blasint>(n);
        blas.sgemm(CblasRowMajor, a_rows ? CblasNoTrans : CblasTrans, b_rows ? CblasNoTrans : CblasTrans, mi, ni, ki, 1.0F, a,
                   a_rows ? ki : mi, b, b_rows ? ni : ki, 0.0F, c, ni);
        return;
    }
#endif
    eigen_matmul(a, a_rows, b, b_rows, c, m, k, n);
}

std::string gemm_library() {
#ifdef RIDGELINE_HAVE_OPENBLAS
    if (const OpenBlas& blas = openblas(); blas.config != nullptr) return blas.config();  // "OpenBLAS 0.3.21 ..."
#endif
    return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
           std::to_string(EIGEN_MINOR_VERSION);
}

}  // namespace ridgeline::calibration
