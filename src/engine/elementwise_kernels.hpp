#pragma once
// Which measured memory-bound kernel each elementwise op of the layer model runs as, forward and
// backward, and the bytes its backward moves per forward byte (a norm's backward reads x and dy
// and writes dx; SwiGLU's reads g, u and dy and writes dg and du). Fused stacks (Transformer
// Engine, torch.compile, XLA) move the same bytes at a copy's rate.
#include "sharding/derive.hpp"

namespace ridgeline {

struct ElementwiseKernels {
    const char* forward;
    const char* backward;
    double backward_bytes_ratio;
};

[[nodiscard]] inline ElementwiseKernels elementwise_kernels(ElementwiseKind kind, bool fused) {
    ElementwiseKernels k{"copy", "copy", 1.0};
    switch (kind) {
        case ElementwiseKind::norm: k = {"rmsnorm_fwd", "rmsnorm_bwd", 1.5}; break;
        case ElementwiseKind::residual_add: k = {"residual_add", "residual_add", 1.0}; break;
        case ElementwiseKind::gated_activation: k = {"swiglu_fwd", "swiglu_bwd", 5.0 / 3.0}; break;
        // GELU reads x and writes y, its backward reads x and dy and writes dx: one kernel each,
        // where eager SwiGLU's forward is two (silu, then the product), so it is priced as a copy
        // and a residual add, the measured kernels of those shapes.
        case ElementwiseKind::plain_activation: k = {"copy", "residual_add", 1.5}; break;
        case ElementwiseKind::rope: k = {"rope_qk_fwd", "rope_qk_bwd", 1.0}; break;
        case ElementwiseKind::copy: break;
    }
    if (fused) k.forward = k.backward = "copy";
    return k;
}

}  // namespace ridgeline
