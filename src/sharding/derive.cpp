#include "sharding/derive.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "mesh/plan_axes.hpp"
#include "model/transformer_math.hpp"

namespace ridgeline {

namespace {

using D = LogicalDim;

double d(std::int64_t value) { return static_cast<double>(value); }

AxisList minus(const AxisList& a, const AxisList& b) {
    AxisList result;
    for (const auto& axis : a)
        if (std::find(b.begin(), b.end(), axis) == b.end()) result.push_back(axis);
    return result;
}
AxisList intersect(const AxisList& a, const AxisList& b) {
    AxisList result;
    for (const auto& axis : a)
        if (std::find(b.begin(), b.end(), axis) != b.end()) result.push_back(axis);
    return result;
}
AxisList all_axes(const TensorSpec& spec) {
    AxisList result;
    for (const auto& axes : spec.axes)
        for (const auto& axis : axes)
            if (std::find(result.begin(), result.end(), axis) == result.end()) result.push_back(axis);
    return result;
}

// A tensor of the layer: its spec and the extent of each logical dimension it has (0: absent).
struct Tensor {
    std::string name;
    TensorSpec spec;
    std::array<double, kLogicalDims> extent{};
    [[nodiscard]] double elements() const {
        double total = 1;
        for (double e : extent)
            if (e > 0) total *= e;
        return total;
    }
    [[nodiscard]] double ext(D dim) const { return extent[static_cast<std::size_t>(dim)]; }
};

struct Context {
    const AxisSizes& sizes;
    const MicroBatch& workload;
    const Strategy& strategy;
    LayerWork& work;

    [[nodiscard]] double size(const AxisList& axes) const { return d(axes_size(axes, sizes)); }
    [[nodiscard]] double local_extent(const Tensor& t, D dim, const AxisList& axes) const {
        const double shards = size(axes);
        const double extent = t.ext(dim);
        if (std::fmod(extent, shards) != 0.0)
            throw InputError("plan", axes.empty() ? t.name : axes.front(),
                             std::string(logical_dim_name(dim)) + " of " + t.name + " (" +
                                 std::to_string(static_cast<long long>(extent)) + ") does not split " +
                                 std::to_string(static_cast<long long>(shards)) + " ways");
        return extent / shards;
    }
    // Bytes of the array a collective over `axes` works on: the tensor divided by its other shardings.
    [[nodiscard]] double group_bytes(const Tensor& t, const AxisList& axes, double element_bytes) const {
        return t.elements() * element_bytes / size(minus(all_axes(t.spec), axes));
    }
    void add(std::string what, CollectiveKind kind, const AxisList& axes, double bytes, CommPhase phase, CommRole role) {
        if (size(axes) <= 1 || (workload.forward_only && phase != CommPhase::forward)) return;
        work.collectives.push_back({std::move(what), kind, axes, bytes, phase, role});
    }
    // The matmul being derived holds these shares of its weight as separate projections (q, k, v;
    // gate, up) when the stack does not fuse them; {1} when it does.
    std::vector<double> projections{1.0};
    // False while a matmul's partial output joins a later reduction (a shared expert's, when the
    // routed experts are combined before one reduction).
    bool reduce_partial_output = true;
    // A collective of the matmul's weight or output: one per projection, each its share.
    void add_split(const std::string& what, CollectiveKind kind, const AxisList& axes, double bytes, CommPhase phase, CommRole role) {
        for (double share : projections) add(what, kind, axes, bytes * share, phase, role);
    }
    // The input's gradient: each projection contributes a whole partial sum, reduced on its own.
    void add_each(const std::string& what, CollectiveKind kind, const AxisList& axes, double bytes, CommPhase phase, CommRole role) {
        for (std::size_t i = 0; i < projections.size(); ++i) add(what, kind, axes, bytes, phase, role);
    }
};

// Weight gradients are partial over the axes that split the tokens but not the weight: reduced
// once per step, scattered where the optimizer state is sharded (then the new weights gathered).
void reduce_gradients(Context& c, const std::string& name, const AxisList& token_axes, const AxisList& weight_axes,
                      double local_weight_elements) {
    if (c.workload.forward_only) return;
    const AxisList grad_axes = minus(token_axes, weight_axes);
    if (grad_axes.empty()) return;
    const auto& ws = c.workload;
    const double grad_bytes = local_weight_elements * ws.grad_bytes;
    const AxisList sharded = intersect(grad_axes, c.strategy.optimizer_shard_axes);
    const AxisList replicated = minus(grad_axes, sharded);
    c.add_split(name + ": reduce-scatter gradients (sharded optimizer)", CollectiveKind::reduce_scatter, sharded, grad_bytes,
                CommPhase::gradient, CommRole::weights);
    c.add_split(name + ": all-gather updated weights", CollectiveKind::all_gather, sharded, local_weight_elements * ws.weight_bytes,
                CommPhase::optimizer, CommRole::weights);
    c.add_split(name + ": all-reduce gradients", CollectiveKind::all_reduce, replicated, grad_bytes, CommPhase::gradient,
                CommRole::weights);
}

// A weight sharded over `axes` where the matmul needs it whole: gathered before the forward and,
// resharded after it (ZeRO-3), again before the backward use; its gradient reduce-scattered back.
void gather_weight(Context& c, const std::string& what, const Tensor& w, const AxisList& axes) {
    const double bytes = c.group_bytes(w, axes, c.workload.weight_bytes);
    c.add_split(what + ": all-gather weight", CollectiveKind::all_gather, axes, bytes, CommPhase::forward, CommRole::weights);
    if (c.workload.forward_only) return;
    if (c.workload.reshard_after_forward)
        c.add_split(what + ": all-gather weight again", CollectiveKind::all_gather, axes, bytes, CommPhase::backward, CommRole::weights);
    c.add_split(what + ": reduce-scatter weight gradient", CollectiveKind::reduce_scatter, axes,
                c.group_bytes(w, axes, c.workload.grad_bytes), CommPhase::backward, CommRole::weights);
}

// An activation sharded over `axes` where the matmul needs it whole: gathered forward (and kept
// for the weight gradient), its gradient reduce-scattered backward (the transpose).
void gather_input(Context& c, const std::string& what, const Tensor& x, const AxisList& axes) {
    const double bytes = c.group_bytes(x, axes, c.workload.activation_bytes);
    c.add(what + ": all-gather input", CollectiveKind::all_gather, axes, bytes, CommPhase::forward, CommRole::activations);
    if (c.workload.forward_only) return;
    c.add_each(what + ": reduce-scatter input gradient", CollectiveKind::reduce_scatter, axes, bytes, CommPhase::backward,
               CommRole::activations);
}

// y[batch, seq, out] = x[batch, seq, contract] @ w[contract, out]
void derive_matmul(Context& c, const std::string& name, const Tensor& x, const Tensor& w, const Tensor& y, D contract,
                   D out) {
    const auto& ws = c.workload;
    Tensor x_eff = x, w_eff = w;
    // Contracting dimension: an axis on one side only is gathered; on both, the result is partial.
    const AxisList gather_w = minus(w.spec.on(contract), x.spec.on(contract));
    const AxisList gather_x = minus(x.spec.on(contract), w.spec.on(contract));
    const AxisList partial = intersect(x.spec.on(contract), w.spec.on(contract));
    if (!gather_w.empty()) {
        gather_weight(c, name, w, gather_w);
        w_eff.spec.on(contract) = partial;
    }
    if (!gather_x.empty()) {
        gather_input(c, name, x, gather_x);
        x_eff.spec.on(contract) = partial;
    }
    // Token dimensions: axes the input has but the output does not are gathered (sequence parallel).
    bool tokens_gathered = false;
    for (D dim : {D::batch, D::seq}) {
        const AxisList extra = minus(x.spec.on(dim), y.spec.on(dim));
        if (extra.empty()) continue;
        tokens_gathered = tokens_gathered || c.size(extra) > 1;
        gather_input(c, name + " (" + logical_dim_name(dim) + ")", x_eff, extra);
        x_eff.spec.on(dim) = intersect(x.spec.on(dim), y.spec.on(dim));
    }
    // Output dimension: weight axes the output does not shard are gathered.
    const AxisList gather_w_out = minus(w.spec.on(out), y.spec.on(out));
    if (!gather_w_out.empty()) gather_weight(c, name + " (output dim)", w_eff, gather_w_out);
    // Partial sums: scattered where the output is sharded on the same axis, else all-reduced. The
    // backward needs the output's gradient whole on those axes: the scatter's transpose gathers it.
    if (!partial.empty()) {
        const bool scattered = !intersect(all_axes(y.spec), partial).empty();
        const double unreduced = y.elements() * ws.activation_bytes / c.size(minus(all_axes(y.spec), partial));
        if (c.reduce_partial_output)
            c.add_split(name + (scattered ? ": reduce-scatter partial output" : ": all-reduce partial output"),
                        scattered ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, partial, unreduced, CommPhase::forward,
                        CommRole::activations);
        if (scattered && !ws.forward_only)
            c.add_split(name + ": all-gather output gradient", CollectiveKind::all_gather, partial, unreduced, CommPhase::backward,
                        CommRole::activations);
    }
    // Input gradient dx = dy w^T contracts over the output dimension: partial over the axes that
    // split both w's and y's output dim. Where x was gathered over them, the gather's transpose
    // reduce-scatters it; else (x replicated there, Megatron's column-parallel layer) all-reduced.
    const AxisList dx_partial = minus(intersect(w_eff.spec.on(out), y.spec.on(out)), all_axes(x.spec));
    if (!dx_partial.empty() && !ws.forward_only)
        c.add_each(name + ": all-reduce input gradient", CollectiveKind::all_reduce, dx_partial,
                   x.elements() * ws.activation_bytes / c.size(minus(all_axes(x.spec), dx_partial)), CommPhase::backward,
                   CommRole::activations);
    AxisList token_axes = x_eff.spec.on(D::batch);
    for (const auto& axis : x_eff.spec.on(D::seq)) token_axes.push_back(axis);
    reduce_gradients(c, name, token_axes, all_axes(w.spec), w.elements() / c.size(all_axes(w.spec)));

    DerivedMatmul matmul;
    matmul.name = name;
    matmul.routed = false;
    matmul.output_reduced = c.size(partial) > 1 && c.reduce_partial_output;
    matmul.input_gradient_reduced = c.size(dx_partial) > 1 || tokens_gathered;
    // The GEMM runs over the input's local tokens: an output split over further token axes takes
    // only its slice, except over the partial-sum axes, whose every row and column is computed
    // and then scattered.
    AxisList y_token_axes = y.spec.on(D::batch);
    for (const auto& axis : y.spec.on(D::seq)) y_token_axes.push_back(axis);
    const double sliced = c.size(minus(minus(y_token_axes, token_axes), partial));
    matmul.rows = c.local_extent(x_eff, D::batch, x_eff.spec.on(D::batch)) * c.local_extent(x_eff, D::seq, x_eff.spec.on(D::seq)) / sliced;
    matmul.contract = c.local_extent(x_eff, contract, x_eff.spec.on(contract));
    matmul.cols = c.local_extent(y, out, minus(y.spec.on(out), partial));
    matmul.weight_elements = w.elements() / c.size(all_axes(w.spec));
    c.work.weight_elements += matmul.weight_elements;
    c.work.matmuls.push_back(matmul);
}

// A tensor with the given dimensions; the spec's entries for dimensions it lacks are dropped
// (a dense MLP weight has no expert dimension even if the strategy splits experts).
Tensor make(const std::string& name, const TensorSpec& spec, std::initializer_list<std::pair<D, double>> dims) {
    Tensor t{name, {}, {}};
    for (const auto& [dim, extent] : dims) {
        t.extent[static_cast<std::size_t>(dim)] = extent;
        t.spec.on(dim) = spec.on(dim);
    }
    return t;
}

}  // namespace

double expected_experts_touched(double n_experts, double top_k, double tokens) {
    return n_experts * (1.0 - std::pow(1.0 - top_k / n_experts, tokens));
}

OutputWork derive_output_work(const ModelSpec& model, const Strategy& strategy, const AxisSizes& sizes, double tokens) {
    OutputWork out;
    out.vocab_local = d(model.vocab_size) / d(axes_size(strategy.mlp_hidden.on(LogicalDim::mlp), sizes));
    out.logits = {"logits", tokens, d(model.d_model), out.vocab_local, 1, d(model.d_model) * out.vocab_local};
    return out;
}

DerivedMatmul derive_mtp_projection(const ModelSpec& model, const Strategy& strategy, const AxisSizes& sizes, double tokens) {
    const double D = d(model.d_model), out = D / d(axes_size(strategy.mlp_hidden.on(LogicalDim::mlp), sizes));
    return {"mtp_projection", tokens, 2.0 * D, out, 1, 2.0 * D * out};
}

std::int64_t axes_size(const AxisList& axes, const AxisSizes& sizes) {
    std::int64_t total = 1;
    for (const auto& axis : axes) {
        const auto it = sizes.find(axis);
        if (it != sizes.end()) total *= it->second;
    }
    return total;
}

namespace {

void derive_dense_mlp(Context& c, const ModelSpec& model, const Tensor& residual, double width, const std::string& prefix) {
    const Strategy& s = c.strategy;
    const double batch = residual.ext(D::batch), S = residual.ext(D::seq), Dm = d(model.d_model);
    const double up = model.mlp == MlpKind::gated ? 2.0 * width : width;
    const Tensor hidden_up = make("mlp_hidden", s.mlp_hidden, {{D::batch, batch}, {D::seq, S}, {D::mlp, up}});
    const Tensor hidden = make("mlp_hidden", s.mlp_hidden, {{D::batch, batch}, {D::seq, S}, {D::mlp, width}});
    if (!c.workload.fused_projections && model.mlp == MlpKind::gated) c.projections = {0.5, 0.5};  // gate, up
    derive_matmul(c, prefix + "mlp_in", residual, make("w_mlp_in", s.w_mlp_in, {{D::embed, Dm}, {D::mlp, up}}), hidden_up, D::embed, D::mlp);
    c.projections = {1.0};
    derive_matmul(c, prefix + "mlp_out", hidden, make("w_mlp_out", s.w_mlp_out, {{D::mlp, width}, {D::embed, Dm}}), residual, D::mlp, D::embed);
}

// Multi-head latent attention (DeepSeek-V2/V3): queries and keys/values pass through low-rank
// latents. The down projections keep the strategy's embed split and leave the latent whole on
// every rank; the up projections split heads as q/k/v do.
void derive_mla_projections(Context& c, const ModelSpec& model, const Tensor& residual, double batch) {
    const Strategy& s = c.strategy;
    const MlaSpec& mla = *model.mla;
    const double S = residual.ext(D::seq), Dm = d(model.d_model), N = d(model.n_heads);
    const double qk_head = d(mla.qk_nope_head_dim + mla.qk_rope_head_dim);
    const auto latent = [&](const std::string& name, double width) {
        return make(name, s.attention, {{D::batch, batch}, {D::seq, S}, {D::latent, width}});
    };
    const auto heads = [&](double width) { return make("attention", s.attention, {{D::batch, batch}, {D::seq, S}, {D::heads, width}}); };
    const auto down = [&](const std::string& name, double width) { return make(name, s.w_qkv, {{D::embed, Dm}, {D::latent, width}}); };
    const auto up = [&](const std::string& name, double rank, double width) {
        return make(name, s.w_qkv, {{D::latent, rank}, {D::heads, width}});
    };
    if (mla.q_lora_rank > 0) {
        const double rank = d(mla.q_lora_rank);
        derive_matmul(c, "q_down", residual, down("w_q_down", rank), latent("q_latent", rank), D::embed, D::latent);
        derive_matmul(c, "q_up", latent("q_latent", rank), up("w_q_up", rank, N * qk_head), heads(N * qk_head), D::latent, D::heads);
    } else {
        derive_matmul(c, "q", residual, make("w_q", s.w_qkv, {{D::embed, Dm}, {D::heads, N * qk_head}}), heads(N * qk_head), D::embed,
                      D::heads);
    }
    // The KV latent and the shared rotary key; only the latent is expanded per head.
    const double kv_down_width = d(mla.kv_lora_rank + mla.qk_rope_head_dim), rank = d(mla.kv_lora_rank);
    derive_matmul(c, "kv_down", residual, down("w_kv_down", kv_down_width), latent("kv_latent", kv_down_width), D::embed, D::latent);
    const double kv_up_width = N * d(mla.qk_nope_head_dim + mla.v_head_dim);
    derive_matmul(c, "kv_up", latent("kv_latent", rank), up("w_kv_up", rank, kv_up_width), heads(kv_up_width), D::latent, D::heads);
}

// Routed experts: tokens travel to the chips holding their experts (AllToAll over the expert
// axes) and back; each chip runs its local experts on the tokens routed to them.
void derive_routed_experts(Context& c, const ModelSpec& model, const Tensor& residual) {
    const Strategy& s = c.strategy;
    const MoeSpec& moe = *model.moe;
    const double Dm = d(model.d_model), E = d(moe.n_experts), k = d(moe.top_k), F = d(moe.d_ff_expert);
    const AxisList expert_axes = s.w_mlp_in.on(D::expert);
    const AxisList expert_tensor_axes = s.w_mlp_in.on(D::mlp);
    const double ep = c.size(expert_axes), etp = c.size(expert_tensor_axes);
    if (std::fmod(E, ep) != 0.0)
        throw InputError("plan", expert_axes.empty() ? axis_name(PlanAxis::expert) : expert_axes.front(),
                         std::to_string(moe.n_experts) + " experts do not split " + std::to_string(static_cast<long long>(ep)) + " ways");
    const double up = model.mlp == MlpKind::gated ? 2.0 * F : F;
    if (std::fmod(F, etp) != 0.0)
        throw InputError("plan", expert_tensor_axes.front(), "expert width " + std::to_string(moe.d_ff_expert) +
                                                                 " does not split " + std::to_string(static_cast<long long>(etp)) + " ways");
    // The router: a small local matmul on every local token.
    DerivedMatmul router{"router", c.work.local_tokens, Dm, E, 1, Dm * E, false};
    c.work.matmuls.push_back(router);
    c.work.weight_elements += router.weight_elements;
    // Tokens sharded over the expert-tensor axes (sequence parallelism) are gathered first: each
    // expert-tensor rank computes its slice of the expert for all the tokens of its group.
    AxisList token_axes = residual.spec.on(D::batch);
    for (const auto& axis : residual.spec.on(D::seq)) token_axes.push_back(axis);
    const double tokens = c.work.local_tokens * c.size(intersect(token_axes, expert_tensor_axes));
    // Each rank sends only its own tokens through the AllToAll; the expert-tensor ranks gather
    // theirs after it (Megatron's order), so the dispatch carries un-gathered tokens.
    const double imbalance = ep > 1 ? c.workload.expert_imbalance : 1.0;
    const double routed_bytes = c.work.local_tokens * ep * k * Dm * c.workload.activation_bytes * imbalance;
    const double dispatched_bytes = routed_bytes * c.workload.dispatch_bytes / c.workload.activation_bytes;
    c.add("experts: all-to-all dispatch", CollectiveKind::all_to_all, expert_axes, dispatched_bytes, CommPhase::forward, CommRole::experts);
    c.add("experts: all-to-all combine", CollectiveKind::all_to_all, expert_axes, routed_bytes, CommPhase::forward, CommRole::experts);
    c.add("experts: all-to-all of gradients", CollectiveKind::all_to_all, expert_axes, 2.0 * routed_bytes, CommPhase::backward,
          CommRole::experts);
    if (etp > 1) {
        // Megatron reduces the k routed copies of each token before combining them; serving engines
        // combine first and reduce one row per token.
        const double copies = c.workload.combine_experts_before_reduce ? 1.0 : k;
        // The token dispatcher runs these, not a GEMM's tensor-parallel overlap (Megatron-Core's
        // --tp-comm-overlap pipelines Transformer Engine's linear layers, not the grouped experts).
        const double unreduced = tokens * copies * Dm * c.workload.activation_bytes;
        c.add("experts: all-reduce partial outputs", CollectiveKind::all_reduce, expert_tensor_axes, unreduced, CommPhase::forward, CommRole::experts);
        c.add("experts: all-reduce input gradients", CollectiveKind::all_reduce, expert_tensor_axes, unreduced, CommPhase::backward, CommRole::experts);
    }
    // The group's tokens reach the experts uniformly: each chip runs the touched share of its own
    // (all of them in training; a few in a small decode batch); the busiest rank's set the pace.
    const double touched = expected_experts_touched(E, k, tokens * ep);
    const double local_experts = touched / ep;
    const double rows = tokens * ep * k / touched * imbalance;
    DerivedMatmul expert_in{"experts_in", rows, Dm, up / etp, local_experts, local_experts * Dm * up / etp, true};
    DerivedMatmul expert_out{"experts_out", rows, F / etp, Dm, local_experts, local_experts * F * Dm / etp, false};
    for (const DerivedMatmul& m : {expert_in, expert_out}) c.work.matmuls.push_back(m);
    const double held = E / ep * (Dm * up + F * Dm) / etp;
    c.work.weight_elements += held;
    AxisList weight_axes = expert_axes;
    for (const auto& axis : expert_tensor_axes) weight_axes.push_back(axis);
    reduce_gradients(c, "experts", token_axes, weight_axes, held);
}

// The tensors of the layer's op list a backward pass may need, on this device: the residual
// stream at each norm, the projections' and the MLP's inputs and outputs, the attention core's
// statistics (or probabilities), the router's logits and the tokens dispatched to experts.
void derive_saved_tensors(LayerWork& work, const ModelSpec& model, double stream, double seq_len) {
    using T = SavedTensor;
    const auto save = [&](T tensor, double elements) {
        work.saved_elements[static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(tensor)))] += elements;
    };
    for (T residual : {T::layer_input, T::attention_norm_output, T::mlp_norm_input, T::mlp_norm_output, T::mlp_output}) save(residual, stream);
    const AttentionCore& a = work.attention;
    save(T::attention_stats, 2.0 * a.heads * a.queries);
    save(T::attention_probs, a.heads * a.queries * seq_len);  // the whole score matrix, masked or not
    // MLA's keys carry the shared rotary part in every head once expanded for the attention kernel.
    if (model.mla) save(T::qkv, a.heads * a.queries * d(model.mla->qk_rope_head_dim));
    for (const DerivedMatmul& m : work.matmuls) {
        const double in = m.rows * m.contract * m.instances, out = m.rows * m.cols * m.instances;
        if (m.name == "qkv" || m.name == "q" || m.name == "q_up" || m.name == "kv_up") save(T::qkv, out);
        if (m.name == "q_up" || m.name == "kv_up") save(T::mla_latents, in);
        if (m.name == "out") save(T::attention_output, in);
        if (m.name.ends_with("mlp_in") || m.name == "experts_in") save(T::mlp_hidden, out);
        if (m.name.ends_with("mlp_out") || m.name == "experts_out") save(T::mlp_activation, in);
        // Router logits and the copies of each token sent to its experts travel with the MLP's input.
        if (m.name == "router") save(T::mlp_norm_output, out);
        if (m.name == "experts_in") save(T::mlp_norm_output, in);
    }
}

}  // namespace

bool is_attention_projection(const std::string& matmul_name) {
    static const std::set<std::string> names = {"qkv", "q", "q_down", "q_up", "kv_down", "kv_up", "out"};
    return names.count(matmul_name) > 0;
}

LayerWork derive_layer_work(const ModelSpec& model, const Strategy& s, const AxisSizes& sizes, const MicroBatch& workload,
                            bool moe_layer) {
    LayerWork work;
    Context c{sizes, workload, s, work};
    // The batch dimension spans every replica: micro-batch per replica times the axes splitting it.
    const double batch = workload.micro_batch_seqs * c.size(s.residual.on(D::batch));
    const double S = workload.seq_len, Dm = d(model.d_model), N = d(model.n_heads);
    const double qk_head = model.mla ? d(model.mla->qk_nope_head_dim + model.mla->qk_rope_head_dim) : d(model.head_dim);
    const double v_head = model.mla ? d(model.mla->v_head_dim) : d(model.head_dim);
    // Above the KV head count, tensor ranks each hold a copy of one KV head (as if there were that many).
    const double head_ranks = c.size(s.w_qkv.on(D::heads));
    const double kv_heads = model.mla ? N : std::max(d(model.n_kv_heads), head_ranks);
    const double kv_replicas = model.mla ? 1.0 : kv_heads / d(model.n_kv_heads);
    const double out_width = N * v_head;

    const Tensor residual = make("residual", s.residual, {{D::batch, batch}, {D::seq, S}, {D::embed, Dm}});
    const Tensor attn_out = make("attention", s.attention, {{D::batch, batch}, {D::seq, S}, {D::heads, out_width}});
    if (model.mla) {
        derive_mla_projections(c, model, residual, batch);
    } else {
        const double qkv_width = N * qk_head + kv_heads * (qk_head + v_head);
        const Tensor attn_in = make("attention", s.attention, {{D::batch, batch}, {D::seq, S}, {D::heads, qkv_width}});
        if (!workload.fused_projections)
            c.projections = {N * qk_head / qkv_width, kv_heads * qk_head / qkv_width, kv_heads * v_head / qkv_width};
        derive_matmul(c, "qkv", residual, make("w_qkv", s.w_qkv, {{D::embed, Dm}, {D::heads, qkv_width}}), attn_in, D::embed, D::heads);
        c.projections = {1.0};
        if (kv_replicas > 1) {
            // The copies of a KV head learn one weight: their gradients are summed over the tensor ranks holding them.
            const double local_kv_weights = Dm * (qk_head + v_head) * kv_heads / head_ranks / c.size(s.w_qkv.on(D::embed));
            c.add("qkv: all-reduce gradients of replicated K/V heads", CollectiveKind::all_reduce, s.w_qkv.on(D::heads),
                  local_kv_weights * workload.grad_bytes, CommPhase::gradient, CommRole::weights);
        }
    }

    // Attention core on the local heads and queries; keys come from the whole sequence (causal:
    // half of them on average, fewer under a window) or from the cache.
    const double local_heads = N / c.size(s.attention.on(D::heads));
    const double local_queries = c.local_extent(attn_out, D::batch, s.attention.on(D::batch)) *
                                 c.local_extent(attn_out, D::seq, s.attention.on(D::seq));
    const double keys = workload.context_len > 0 ? mean_decode_keys(model, workload.context_len) : mean_causal_keys(model, S);
    work.attention = {2.0 * local_heads * (qk_head + v_head) * local_queries * keys, local_queries, keys, local_heads, qk_head, v_head,
                      model.mla ? d(model.mla->kv_lora_rank + model.mla->qk_rope_head_dim)
                                : kv_heads / c.size(s.attention.on(D::heads)) * (qk_head + v_head)};
    work.local_tokens = c.local_extent(residual, D::batch, s.residual.on(D::batch)) *
                        c.local_extent(residual, D::seq, s.residual.on(D::seq));
    const AxisList context = s.attention.on(D::seq);
    if (c.size(context) > 1) {
        const double kv_bytes = local_queries * (kv_heads / c.size(s.attention.on(D::heads))) * (qk_head + v_head) *
                                workload.activation_bytes;
        if (s.context_attention == ContextAttention::ring) {
            // Ring attention: each rank's K and V chunk visits every other rank; gradients return the same way.
            const double steps = c.size(context) - 1.0;
            c.add("attention: pass K/V around the context ring", CollectiveKind::permute, context, kv_bytes * steps,
                  CommPhase::forward, CommRole::context);
            c.add("attention: pass K/V and their gradients around the ring", CollectiveKind::permute, context,
                  2.0 * kv_bytes * steps, CommPhase::backward, CommRole::context);
        } else {
            // All-gather the whole sequence's K and V before attention; reduce-scatter their gradients.
            const double gathered = kv_bytes * c.size(context);
            c.add("attention: all-gather K/V over context", CollectiveKind::all_gather, context, gathered, CommPhase::forward,
                  CommRole::context);
            c.add("attention: reduce-scatter K/V gradients over context", CollectiveKind::reduce_scatter, context, gathered,
                  CommPhase::backward, CommRole::context);
        }
    }
    derive_matmul(c, "out", attn_out, make("w_out", s.w_out, {{D::heads, out_width}, {D::embed, Dm}}), residual, D::heads, D::embed);

    if (moe_layer && model.moe) {
        if (model.moe->n_shared_experts > 0) {
            // Combining first, the shared expert's partial sums join the routed experts' one reduction.
            c.reduce_partial_output = !(workload.combine_experts_before_reduce && c.size(s.w_mlp_in.on(D::mlp)) > 1);
            derive_dense_mlp(c, model, residual, d(model.moe->n_shared_experts * model.moe->d_ff_expert), "shared_");
            c.reduce_partial_output = true;
        }
        derive_routed_experts(c, model, residual);
    } else {
        derive_dense_mlp(c, model, residual, d(model.d_ff), "");
    }
    // Memory-bound kernels: each norm reads and writes the residual stream, each residual add
    // reads two streams and writes one (counted as two passes), each GEMM output is read and
    // written again (bias, activation, cast), routed tokens are permuted into expert order and back.
    // The stream is this device's share: its tokens, and its slice of the embedding where the
    // strategy splits it (MaxText's rules put the residual's embed on the tensor axis).
    const double stream = work.local_tokens * c.local_extent(residual, D::embed, s.residual.on(D::embed));
    // The activation follows the up projections, RoPE the query/key projections.
    using K = ElementwiseKind;
    work.elementwise = {{"norms", 4.0 * stream, K::norm, 2}, {"residual adds", 4.0 * stream, K::residual_add, 2}};
    for (const DerivedMatmul& m : work.matmuls) {
        const bool up = m.name.ends_with("mlp_in") || m.name == "experts_in";
        // Models with learned absolute positions (GPT-2/3) rotate nothing.
        const bool rotary = model.learned_position_embeddings == 0 &&
                            (m.name == "qkv" || m.name == "q" || m.name == "q_up" || m.name == "kv_down");
        const K activation = model.mlp == MlpKind::gated ? K::gated_activation : K::plain_activation;
        const K kind = up ? activation : (rotary ? K::rope : K::copy);
        work.elementwise.push_back({m.name + " epilogue", 2.0 * m.rows * m.cols * m.instances, kind, kind == K::copy ? 0.0 : 1.0});
        if (m.routed) work.elementwise.push_back({m.name + " token permute", 4.0 * m.rows * m.contract * m.instances, K::copy, 2});
        // Routing in fp32 (Megatron-Core's --moe-router-dtype fp32): the softmax reads the logits and
        // writes the probabilities, top-k reads them again: 12 bytes, 6 bf16 elements, per score.
        if (m.name == "router") work.elementwise.push_back({"router softmax and top-k", 6.0 * m.rows * m.cols, K::copy, 1});
    }
    derive_saved_tensors(work, model, stream, S);
    return work;
}

}  // namespace ridgeline
