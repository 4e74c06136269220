#include "engine/stragglers.hpp"

#include <cmath>
#include <unordered_map>

namespace ridgeline {

double expected_max_standard_normal(double n) {
    if (!(n > 1.0)) return 0.0;
    // A search asks for one n plan after plan, a fit's trials cycle through a few dozen chip counts:
    // remember the last and every one seen (per thread, no lock).
    thread_local double last_n = 0, last_value = 0;
    if (n == last_n) return last_value;
    thread_local std::unordered_map<double, double> known;
    last_n = n;
    if (const auto it = known.find(n); it != known.end()) return last_value = it->second;
    if (known.size() >= 4096) known.clear();
    // Trapezoid rule over [-8, 12]: the density n phi Phi^(n-1) is negligible outside it for any n
    // up to 1e12 (its mode is near sqrt(2 ln n) <= 7.4).
    constexpr double kFrom = -8.0, kTo = 12.0, kStep = 1e-3;
    const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * M_PI);
    double sum = 0;
    for (double x = kFrom; x <= kTo; x += kStep) {
        const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
        if (cdf <= 0) continue;
        const double density = n * inv_sqrt_2pi * std::exp(-0.5 * x * x + (n - 1.0) * std::log(cdf));
        sum += x * density;
    }
    return last_value = known[n] = sum * kStep;
}

double straggler_fraction(double ranks, double rank_time_cv) {
    return rank_time_cv > 0 ? rank_time_cv * expected_max_standard_normal(ranks) : 0.0;
}

}  // namespace ridgeline
