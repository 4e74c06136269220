#pragma once
// The work of one transformer layer's forward pass, op by op, for placing on a chip's ideal
// roofline: a training/prefill micro-batch (causal attention over the sequence) or one decode step
// (one new token per sequence, attention reading the KV cache). The ops are the layer model's
// (sharding/derive.hpp) on one unsharded chip.
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "engine/roofline.hpp"
#include "model/model_spec.hpp"
#include "sharding/derive.hpp"
#include "stack/stack.hpp"

namespace ridgeline {

enum class Phase { training, prefill, decode };

struct LayerWorkload {
    Phase phase = Phase::training;
    double sequences = 1;  // sequences in the batch
    double seq_len = 1;    // tokens per sequence (training/prefill) or context length (decode)
    Dtype activations = Dtype::bf16;
    Dtype weights = Dtype::bf16;
    Dtype kv_cache = Dtype::bf16;
    [[nodiscard]] double tokens() const { return phase == Phase::decode ? sequences : sequences * seq_len; }
};

struct LayerOp {
    std::string name;
    double flops = 0;
    double bytes = 0;       // HBM traffic: weights, activations in and out, KV cache
    bool attention_core = false;
    std::optional<double> predicted_s;  // the chip's measured kernels under the stack (forward)
};

// What runs the ops, for their predicted times: a chip with measured kernels and the stack that
// picks the attention kernel and fuses (or not) the elementwise ops.
struct KernelPricing {
    const ChipSpec& chip;
    const Stack& stack;
};

// Ops of an average layer (an MoE model's dense and MoE layers weighted by their counts): the
// projections, the fused attention core, the MLP or router, shared and touched experts, and the
// memory-bound kernels. With `pricing` on a chip whose kernels are measured, each op's predicted
// time too (InputError where the stack's attention kernel is unmeasured there).
[[nodiscard]] std::vector<LayerOp> layer_ops(const ModelSpec& model, const LayerWorkload& workload,
                                             const KernelPricing* pricing = nullptr);

// Each op against the chip's peak for `compute` and its HBM bandwidth.
struct PlacedOp {
    LayerOp op;
    RooflineTime time;
};
struct LayerRoofline {
    std::vector<PlacedOp> ops;
    double flops = 0;
    double bytes = 0;
    double time_s = 0;  // ops run one after another, each at its own roofline (sum of the maxima)
    [[nodiscard]] Bound bound() const;  // the bound of the ops holding most of the time
};
[[nodiscard]] LayerRoofline place_on_roofline(const ChipSpec& chip, const std::vector<LayerOp>& ops, Dtype compute);

[[nodiscard]] const char* phase_name(Phase phase);

// Elements one token keeps alive in one average layer under a set of saved tensors, from the op
// list of one unsharded sequence of `seq_len` tokens (fp32 statistics count twice).
[[nodiscard]] double saved_elements_per_token(const ModelSpec& model, double seq_len, SavedTensors saved);

}  // namespace ridgeline
