#include "engine/layer_ops.hpp"

#include <cmath>

namespace ridgeline {

namespace {

double d(std::int64_t value) { return static_cast<double>(value); }

// [rows, contract] x [contract, cols]: weights read once, activations read and written once.
LayerOp matmul_op(std::string name, double rows, double contract, double cols, const LayerWorkload& w) {
    const double act = bytes_per_element(w.activations);
    return {std::move(name), 2.0 * rows * contract * cols,
            act * rows * contract + bytes_per_element(w.weights) * contract * cols + act * rows * cols, false};
}

// `copies` identical MLPs (touched experts), each over `rows` tokens, present in `layer_fraction`
// of the layers.
void add_mlp_ops(std::vector<LayerOp>& ops, const ModelSpec& model, const LayerWorkload& w, const std::string& prefix,
                 double rows, double width, double copies, double layer_fraction) {
    const double D = d(model.d_model);
    const bool gated = model.mlp == MlpKind::gated;
    for (LayerOp op : {matmul_op(prefix + (gated ? "gate+up" : "up"), rows, D, gated ? 2.0 * width : width, w),
                       matmul_op(prefix + "down", rows, width, D, w)}) {
        op.flops *= copies * layer_fraction;
        op.bytes *= copies * layer_fraction;
        ops.push_back(op);
    }
}

}  // namespace

const char* phase_name(Phase phase) {
    switch (phase) {
        case Phase::training: return "training";
        case Phase::prefill: return "prefill";
        case Phase::decode: return "decode";
    }
    return "training";
}

Bound LayerRoofline::bound() const {
    double compute_bound_s = 0;
    for (const PlacedOp& placed : ops)
        if (placed.time.bound() == Bound::compute) compute_bound_s += placed.time.lower_bound_s();
    return compute_bound_s * 2.0 >= time_s ? Bound::compute : Bound::memory;
}

LayerRoofline place_on_roofline(const ChipSpec& chip, const std::vector<LayerOp>& ops, Dtype compute) {
    LayerRoofline layer;
    for (const LayerOp& op : ops) {
        const RooflineTime time = roofline_time(op.flops, op.bytes, chip.peak_flops(compute), chip.hbm_bw_Bps);
        layer.ops.push_back({op, time});
        layer.flops += op.flops;
        layer.bytes += op.bytes;
        layer.time_s += time.lower_bound_s();
    }
    return layer;
}

std::vector<LayerOp> layer_ops(const ModelSpec& model, const LayerWorkload& w) {
    std::vector<LayerOp> ops;
    const double tokens = w.tokens();
    const double D = d(model.d_model), N = d(model.n_heads), K = d(model.n_kv_heads);

    // Attention projections. Widths: q and out span all query heads; k and v the KV heads
    // (MLA: its up-projection materialises k and v per query head).
    double qk_head = d(model.head_dim), v_head = d(model.head_dim), kv_heads = K;
    if (model.mla) {
        const MlaSpec& mla = *model.mla;
        qk_head = d(mla.qk_nope_head_dim + mla.qk_rope_head_dim);
        v_head = d(mla.v_head_dim);
        kv_heads = N;
        if (mla.q_lora_rank > 0) {
            ops.push_back(matmul_op("q_down", tokens, D, d(mla.q_lora_rank), w));
            ops.push_back(matmul_op("q_up", tokens, d(mla.q_lora_rank), N * qk_head, w));
        } else {
            ops.push_back(matmul_op("q_proj", tokens, D, N * qk_head, w));
        }
        ops.push_back(matmul_op("kv_down", tokens, D, d(mla.kv_lora_rank + mla.qk_rope_head_dim), w));
        ops.push_back(matmul_op("kv_up", tokens, d(mla.kv_lora_rank), N * d(mla.qk_nope_head_dim + mla.v_head_dim), w));
    } else {
        ops.push_back(matmul_op("q_proj", tokens, D, N * qk_head, w));
        ops.push_back(matmul_op("kv_proj", tokens, D, K * (qk_head + v_head), w));
    }
    const double q_width = N * qk_head, out_width = N * v_head;

    // Attention core: QK^T and AV for every query head, fused (scores stay in on-chip memory).
    LayerOp core{"attention", 0, 0, true};
    const double act = bytes_per_element(w.activations);
    const double flops_per_key = 2.0 * N * (qk_head + v_head);
    if (w.phase == Phase::decode) {
        core.flops = flops_per_key * tokens * w.seq_len;
        const double kv_elements_per_token = model.mla ? d(model.mla->kv_lora_rank + model.mla->qk_rope_head_dim)
                                                       : K * (qk_head + v_head);
        core.bytes = w.sequences * w.seq_len * kv_elements_per_token * bytes_per_element(w.kv_cache) +
                     act * tokens * (q_width + out_width);
    } else {
        core.flops = flops_per_key * tokens * (w.seq_len + 1.0) / 2.0;  // causal: half the keys on average
        core.bytes = act * tokens * (q_width + kv_heads * (qk_head + v_head) + out_width);
    }
    ops.push_back(core);
    ops.push_back(matmul_op("o_proj", tokens, out_width, D, w));

    // MLP: dense layers, and MoE layers (router, shared experts, the experts this batch touches).
    const double layers = d(model.n_layers);
    const double dense_fraction = d(model.dense_layers()) / layers;
    if (dense_fraction > 0) add_mlp_ops(ops, model, w, "mlp_", tokens, d(model.d_ff), 1.0, dense_fraction);
    if (model.moe) {
        const MoeSpec& moe = *model.moe;
        const double moe_fraction = d(model.moe_layers()) / layers;
        LayerOp router = matmul_op("router", tokens, D, d(moe.n_experts), w);
        router.flops *= moe_fraction;
        router.bytes *= moe_fraction;
        ops.push_back(std::move(router));
        if (moe.n_shared_experts > 0)
            add_mlp_ops(ops, model, w, "shared_", tokens, d(moe.n_shared_experts * moe.d_ff_expert), 1.0, moe_fraction);
        const double touched = expected_experts_touched(d(moe.n_experts), d(moe.top_k), tokens);
        const double rows_per_expert = tokens * d(moe.top_k) / touched;
        add_mlp_ops(ops, model, w, "experts_", rows_per_expert, d(moe.d_ff_expert), touched, moe_fraction);
    }
    return ops;
}

}  // namespace ridgeline
