#pragma once
// Bounds as words, for tables and JSON.
#include <string>

#include "engine/bound.hpp"

namespace ridgeline::report {

[[nodiscard]] inline const char* bound_name(Bound bound) {
    static constexpr const char* kNames[] = {"compute", "memory", "memory (weights)", "memory (KV cache)",
                                             "network", "latency", "pipeline", "host link"};  // in Bound's order
    return kNames[static_cast<std::size_t>(bound)];
}

// A network bound names its link level.
[[nodiscard]] inline std::string limit_text(const Limit& limit) {
    return limit.bound == Bound::network && !limit.level.empty() ? limit.level : bound_name(limit.bound);
}

}  // namespace ridgeline::report
