#include "calibration/kernels.hpp"

#include <Eigen/Core>

namespace ridgeline::calibration {

namespace {

template <int Order>
using Mat = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Order>>;
using Out = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <int AOrder, int BOrder>
void product(const float* a, const float* b, float* c, Eigen::Index m, Eigen::Index k, Eigen::Index n) {
    Out(c, m, n).noalias() = Mat<AOrder>(a, m, k) * Mat<BOrder>(b, k, n);
}

}  // namespace

void matmul(const float* a, Layout a_layout, const float* b, Layout b_layout, float* c, std::int64_t m, std::int64_t k,
            std::int64_t n) {
    const auto mi = static_cast<Eigen::Index>(m), ki = static_cast<Eigen::Index>(k), ni = static_cast<Eigen::Index>(n);
    constexpr int R = Eigen::RowMajor, C = Eigen::ColMajor;
    const bool ar = a_layout == Layout::row_major, br = b_layout == Layout::row_major;
    if (ar && br) product<R, R>(a, b, c, mi, ki, ni);
    else if (ar) product<R, C>(a, b, c, mi, ki, ni);
    else if (br) product<C, R>(a, b, c, mi, ki, ni);
    else product<C, C>(a, b, c, mi, ki, ni);
}

std::string eigen_version() {
    return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
           std::to_string(EIGEN_MINOR_VERSION);
}

}  // namespace ridgeline::calibration
