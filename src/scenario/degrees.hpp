#pragma once
// The parallel degrees people write, in training and serving plans, searches and run records.
#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "mesh/plan_axes.hpp"

namespace ridgeline {

// dp counts the fsdp and expert ranks (0: what the chips leave).
struct Degrees {
    std::int64_t dp = 0;
    std::int64_t tp = 1, pp = 1, cp = 1, ep = 1, fsdp = 1;
    [[nodiscard]] std::int64_t data() const { return dp / fsdp / ep; }  // replicas beyond fsdp and expert
    // Sizes of the plan's mesh axes, in PlanAxis order.
    [[nodiscard]] std::array<std::int64_t, kPlanAxes> sizes() const { return {data(), fsdp, ep, tp, cp, pp}; }
    // The same by axis name, as strategies name the axes.
    [[nodiscard]] std::map<std::string, std::int64_t> axis_sizes() const {
        std::map<std::string, std::int64_t> named;
        const auto s = sizes();
        for (std::size_t i = 0; i < kPlanAxes; ++i) named[kPlanAxisNames[i]] = s[i];
        return named;
    }
};

}  // namespace ridgeline
