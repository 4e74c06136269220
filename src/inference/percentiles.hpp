#pragma once
// A latency's distribution as serving benchmarks report it, and the names they give each statistic.
#include <array>
#include <stdexcept>
#include <string>

namespace ridgeline {

struct Percentiles {
    double mean = 0, p50 = 0, p90 = 0, p99 = 0;
    static constexpr std::array<const char*, 4> kNames{"mean", "p50", "p90", "p99"};
    // std::invalid_argument for a name not in kNames.
    [[nodiscard]] double at(const std::string& name) const {
        const double values[] = {mean, p50, p90, p99};
        for (std::size_t i = 0; i < kNames.size(); ++i)
            if (name == kNames[i]) return values[i];
        throw std::invalid_argument("no statistic named " + name);
    }
};

}  // namespace ridgeline
