#pragma once
// A sharding strategy as data (strategies/*.json): for the tensors of a transformer layer, which
// named mesh axes split which logical dimension, in the spirit of JAX's PartitionSpec. The
// engine derives every collective from these specs (sharding/derive.hpp); no strategy is a
// special case in code. Axes of size 1 vanish, so one strategy covers many plans.
#include <array>
#include <string>
#include <vector>

namespace ridgeline {

// Logical dimensions of the layer's tensors.
// `latent`: the low-rank inner width of MLA's down/up projections, never split by a strategy.
enum class LogicalDim { batch, seq, embed, heads, mlp, expert, latent };
inline constexpr std::size_t kLogicalDims = 7;
[[nodiscard]] const char* logical_dim_name(LogicalDim dim);

using AxisList = std::vector<std::string>;

struct TensorSpec {
    std::array<AxisList, kLogicalDims> axes;  // per logical dimension
    [[nodiscard]] const AxisList& on(LogicalDim dim) const { return axes[static_cast<std::size_t>(dim)]; }
    [[nodiscard]] AxisList& on(LogicalDim dim) { return axes[static_cast<std::size_t>(dim)]; }
};

// How attention reaches the keys and values of a sequence split over context ranks.
enum class ContextAttention { ring, all_gather };

struct Strategy {
    std::string name;
    std::string description;
    // Activations: the residual stream between blocks, q/k/v and the attention output, the MLP hidden.
    TensorSpec residual, attention, mlp_hidden;
    // Weights: [embed, heads] for QKV, [heads, embed] for the output projection, [embed, mlp] and
    // [mlp, embed] for the MLP; expert weights add the expert dimension.
    TensorSpec w_qkv, w_out, w_mlp_in, w_mlp_out;
    std::string layers_axis;         // splits the layers into pipeline stages ("" for none)
    ContextAttention context_attention = ContextAttention::ring;
    AxisList gradient_shard_axes;    // ZeRO-2: gradients reduce-scattered and kept sharded over these
    AxisList optimizer_shard_axes;   // ZeRO-1: optimizer state (and master weights) sharded over these
};

}  // namespace ridgeline
