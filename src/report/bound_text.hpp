#pragma once
// Bounds as words, for tables and JSON.
#include <string>

#include "engine/bound.hpp"

namespace ridgeline::report {

[[nodiscard]] inline const char* bound_name(Bound bound) {
    switch (bound) {
        case Bound::compute: return "compute";
        case Bound::memory: return "memory";
        case Bound::weights: return "memory (weights)";
        case Bound::kv_cache: return "memory (KV cache)";
        case Bound::network: return "network";
        case Bound::latency: return "latency";
        case Bound::pipeline: return "pipeline";
        case Bound::host_link: return "host link";
    }
    return "compute";
}

// A network bound names its link level.
[[nodiscard]] inline std::string limit_text(const Limit& limit) {
    return limit.bound == Bound::network && !limit.level.empty() ? limit.level : bound_name(limit.bound);
}

}  // namespace ridgeline::report
