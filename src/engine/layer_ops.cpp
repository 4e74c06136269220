#include "engine/layer_ops.hpp"

#include "engine/elementwise_kernels.hpp"

namespace ridgeline {

const char* phase_name(Phase phase) {
    static constexpr const char* kNames[] = {"training", "prefill", "decode"};  // in Phase's order
    return kNames[static_cast<std::size_t>(phase)];
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

std::vector<LayerOp> layer_ops(const ModelSpec& model, const LayerWorkload& w, const KernelPricing* pricing) {
    const bool decode = w.phase == Phase::decode;
    MicroBatch pass;
    pass.micro_batch_seqs = w.sequences;
    pass.seq_len = decode ? 1.0 : w.seq_len;
    pass.context_len = decode ? w.seq_len : 0.0;
    const Strategy unsharded;  // every tensor whole on one chip
    const double act = bytes_per_element(w.activations), weight = bytes_per_element(w.weights);
    const bool priced = pricing != nullptr && pricing->chip.kernels.has_value();
    const MatmulDtypes dtypes{w.activations, w.weights, w.activations};
    std::vector<LayerOp> ops;
    // Ops of the same name in dense and MoE layers (projections, attention) are one op of the average layer.
    const auto add = [&](LayerOp op, double fraction) {
        op.flops *= fraction;
        op.bytes *= fraction;
        if (op.predicted_s) *op.predicted_s *= fraction;
        for (LayerOp& known : ops)
            if (known.name == op.name) {
                known.flops += op.flops;
                known.bytes += op.bytes;
                if (known.predicted_s && op.predicted_s) *known.predicted_s += *op.predicted_s;
                return;
            }
        ops.push_back(std::move(op));
    };
    const auto add_layer = [&](const LayerWork& work, double fraction) {
        bool attention_added = false;
        for (const DerivedMatmul& m : work.matmuls) {
            // The attention core sits between the q/k/v projections and the output projection.
            if (m.name == "out" && !attention_added) {
                const AttentionCore& a = work.attention;
                LayerOp core{"attention", a.flops, a.hbm_bytes(decode, act, bytes_per_element(w.kv_cache)), true, {}};
                if (priced)
                    core.predicted_s = attention_time(pricing->chip, attention_family(pricing->chip, pricing->stack.attention),
                                                      AttentionPassKind::forward, core.flops, core.bytes, decode ? 0.0 : w.seq_len)
                                           .lower_bound_s();
                add(core, fraction);
                attention_added = true;
            }
            LayerOp op{m.name, m.flops(), act * (m.rows * m.contract + m.rows * m.cols) * m.instances + weight * m.weight_elements, false, {}};
            if (priced) op.predicted_s = gemm_time(pricing->chip, {m.rows, m.contract, m.cols, m.instances, m.weight_elements}, dtypes).lower_bound_s();
            add(op, fraction);
        }
        LayerOp elementwise{"elementwise (norms, residuals, epilogues)", 0, act * work.elementwise_elements(), false, {}};
        if (priced) {
            double s = 0;
            for (const ElementwiseOp& e : work.elementwise)
                s += memory_bound_s(pricing->chip, elementwise_kernels(e.kind, pricing->stack.fused_elementwise).forward, act * e.elements, e.launches);
            elementwise.predicted_s = s;
        }
        add(elementwise, fraction);
    };
    const double dense_fraction = static_cast<double>(model.dense_layers()) / static_cast<double>(model.n_layers);
    if (dense_fraction > 0) add_layer(derive_layer_work(model, unsharded, {}, pass, false), dense_fraction);
    if (model.moe) add_layer(derive_layer_work(model, unsharded, {}, pass, true), 1.0 - dense_fraction);
    return ops;
}

double saved_elements_per_token(const ModelSpec& model, double seq_len, SavedTensors saved) {
    MicroBatch pass;
    pass.seq_len = seq_len;
    const Strategy unsharded;
    const double dense_fraction = static_cast<double>(model.dense_layers()) / static_cast<double>(model.n_layers);
    double elements = 0;
    for (const bool moe_layer : {false, true}) {
        const double fraction = moe_layer ? 1.0 - dense_fraction : dense_fraction;
        if (fraction <= 0 || (moe_layer && !model.moe)) continue;
        const LayerWork work = derive_layer_work(model, unsharded, {}, pass, moe_layer);
        for (std::size_t bit = 0; bit < kSavedTensorCount; ++bit)
            if ((saved >> bit) & 1u) elements += fraction * work.saved_elements[bit];
    }
    return elements / seq_len;
}

}  // namespace ridgeline
