#pragma once
// A named recomputation policy: the modules it runs again in the backward pass (recompute/*.json).
#include <string>

#include "model/transformer_math.hpp"

namespace ridgeline {

struct RecomputePolicy {
    std::string name = "none";
    RecomputeModules modules = 0;
    bool operator==(const RecomputePolicy& other) const = default;
};

}  // namespace ridgeline
