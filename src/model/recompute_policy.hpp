#pragma once
// A named recomputation policy: the modules it runs again in the backward pass, and where it keeps
// the rest (recompute/*.json).
#include <string>

#include "model/transformer_math.hpp"

namespace ridgeline {

struct RecomputePolicy {
    std::string name = "none";
    RecomputeModules modules = 0;
    // The tensors it keeps, apart from each layer's input, wait in host memory between the forward
    // and the backward pass (JAX's save_and_offload_only_these_names, offload_dot_with_no_batch_dims).
    bool offload = false;
    bool operator==(const RecomputePolicy& other) const = default;
};

}  // namespace ridgeline
