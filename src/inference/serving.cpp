#include "inference/serving.hpp"

#include <algorithm>
#include <cmath>

#include "collective/link_bytes.hpp"
#include "core/error.hpp"
#include "engine/cost.hpp"
#include "engine/layer_ops.hpp"
#include "engine/roofline.hpp"
#include "inference/serving_rules.hpp"
#include "mesh/plan_axes.hpp"
#include "model/transformer_math.hpp"

namespace ridgeline {

namespace {

double d(std::int64_t value) { return static_cast<double>(value); }
std::string text(std::int64_t value) { return std::to_string(value); }

constexpr Dtype kActivations = Dtype::bf16;

// What one chip of a replica computes and moves for a pass of `seqs` sequences: prefill of
// `len` tokens each (causal attention), or one decode step with `len` keys of context each.
class ChipModel {
public:
    explicit ChipModel(const ServingScenario& s)
        : s_(s), tp_(d(s.plan.tp)), ep_(d(s.plan.ep)), hbm_Bps_(s.chip.hbm_bw_Bps * s.chip.efficiency.hbm) {}

    [[nodiscard]] LayerCost layer(bool decode, double seqs, double len) const;
    [[nodiscard]] PhaseCost phase(bool decode, double seqs, double len) const;
    [[nodiscard]] double hbm_Bps() const { return hbm_Bps_; }

private:
    void matmul(LayerCost& c, double rows, double contract, double cols, double copies, double fraction) const;
    void collective(LayerCost& c, const std::string& what, CollectiveKind kind, PlanAxis axis, double bytes, double fraction) const;

    const ServingScenario& s_;
    double tp_, ep_, hbm_Bps_;
};

void ChipModel::matmul(LayerCost& c, double rows, double contract, double cols, double copies, double fraction) const {
    if (rows <= 0 || copies <= 0 || fraction <= 0) return;
    const double scale = copies * fraction;
    // The chip's GEMM efficiency, tiles included: a decode GEMM of a few rows still runs whole tiles, so
    // its compute side approaches the weight streaming well below the ideal roofline's critical batch.
    const RooflineTime t = gemm_time(s_.chip, {rows, contract, cols, scale, contract * cols * scale},
                                     {kActivations, s_.plan.weights, s_.plan.compute()});
    const double weights = contract * cols * bytes_per_element(s_.plan.weights) * scale;
    c.matmul_flops += t.flops;
    c.weight_bytes += weights;
    c.activation_bytes += t.bytes - weights;
    c.matmul_compute_s += t.compute_s;
    c.matmul_memory_s += t.memory_s;
    c.matmul_s += t.lower_bound_s();
    if (t.compute_s >= t.memory_s) c.matmul_compute_bound_s += t.compute_s;
}

void ChipModel::collective(LayerCost& c, const std::string& what, CollectiveKind kind, PlanAxis axis, double bytes,
                           double fraction) const {
    const auto group = group_footprint(s_.mesh, {axis_name(axis)}, "plan");
    const CollectiveCost cost = collective_cost(s_.cluster, group, kind, collective_link_bytes(s_.chip, kind, bytes));
    CollectiveUse use{what, kind, axis_name(axis), bytes * fraction, cost.time_s() * fraction, cost.bottleneck};
    c.collective_s += use.time_s;
    c.collectives.push_back(std::move(use));
}

LayerCost ChipModel::layer(bool decode, double seqs, double len) const {
    const ModelSpec& m = s_.model;
    const double tokens = decode ? seqs : seqs * len;
    const double D = d(m.d_model), N = d(m.n_heads) / tp_;
    const double act = bytes_per_element(kActivations);
    LayerCost c;

    // Attention projections, split over tensor by heads.
    double qk = d(m.head_dim), v = d(m.head_dim), kv_elements = d(m.n_kv_heads) / tp_ * 2.0 * d(m.head_dim);
    if (m.mla) {
        const MlaSpec& mla = *m.mla;
        qk = d(mla.qk_nope_head_dim + mla.qk_rope_head_dim);
        v = d(mla.v_head_dim);
        // The compressed latent is shared by all heads: every tensor rank keeps all of it.
        kv_elements = d(mla.kv_lora_rank + mla.qk_rope_head_dim);
        if (mla.q_lora_rank > 0) {
            matmul(c, tokens, D, d(mla.q_lora_rank), 1, 1);
            matmul(c, tokens, d(mla.q_lora_rank), N * qk, 1, 1);
        } else {
            matmul(c, tokens, D, N * qk, 1, 1);
        }
        matmul(c, tokens, D, kv_elements, 1, 1);
        matmul(c, tokens, d(mla.kv_lora_rank), N * d(mla.qk_nope_head_dim + mla.v_head_dim), 1, 1);
    } else {
        matmul(c, tokens, D, N * qk, 1, 1);
        matmul(c, tokens, D, kv_elements, 1, 1);
    }
    matmul(c, tokens, N * v, D, 1, 1);

    // Attention core (fused). Decode reads each sequence's cache; prefill writes it.
    const double kv_bytes = bytes_per_element(s_.plan.kv_cache);
    const double flops_per_key = 2.0 * N * (qk + v);
    RooflineTime attention;
    if (decode) {
        c.attention_flops = flops_per_key * tokens * len;
        c.kv_bytes = seqs * len * kv_elements * kv_bytes;
        // One query per sequence: no causal tile waste, the kernel streams the cache.
        attention = attention_time(s_.chip, c.attention_flops, c.kv_bytes + act * tokens * N * (qk + v), 0.0);
    } else {
        c.attention_flops = flops_per_key * tokens * (len + 1.0) / 2.0;  // causal: half the keys on average
        c.kv_bytes = tokens * kv_elements * kv_bytes;
        attention = attention_time(s_.chip, c.attention_flops, c.kv_bytes + act * tokens * (N * (qk + v) + kv_elements), len);
    }
    c.attention_compute_s = attention.compute_s;
    c.attention_memory_s = attention.memory_s;

    // MLP: dense layers, and MoE layers (router, shared experts, the routed experts this chip holds).
    const double layers = d(m.n_layers);
    const double dense_fraction = d(m.dense_layers()) / layers;
    const double up = m.mlp == MlpKind::gated ? 2.0 : 1.0;
    if (dense_fraction > 0) {
        matmul(c, tokens, D, up * d(m.d_ff) / tp_, 1, dense_fraction);
        matmul(c, tokens, d(m.d_ff) / tp_, D, 1, dense_fraction);
    }
    if (s_.plan.tp > 1)
        for (const char* what : {"tensor all-reduce (attention out)", "tensor all-reduce (MLP out)"})
            collective(c, what, CollectiveKind::all_reduce, PlanAxis::tensor, tokens * D * act, 1.0);
    if (m.moe) {
        const MoeSpec& moe = *m.moe;
        const double moe_fraction = d(m.moe_layers()) / layers;
        const double width = d(moe.d_ff_expert);
        matmul(c, tokens, D, d(moe.n_experts), 1, moe_fraction);  // router, replicated
        if (moe.n_shared_experts > 0) {
            const double shared = d(moe.n_shared_experts) * width / tp_;
            matmul(c, tokens, D, up * shared, 1, moe_fraction);
            matmul(c, tokens, shared, D, 1, moe_fraction);
        }
        // The ep replicas of a group route their tokens together; each chip holds 1/ep of the experts.
        const double group_tokens = tokens * ep_;
        const double touched = expected_experts_touched(d(moe.n_experts), d(moe.top_k), group_tokens);
        const double rows = group_tokens * d(moe.top_k) / touched;
        matmul(c, rows, D, up * width / tp_, touched / ep_, moe_fraction);
        matmul(c, rows, width / tp_, D, touched / ep_, moe_fraction);
        if (s_.plan.ep > 1)
            for (const char* what : {"expert all-to-all (dispatch)", "expert all-to-all (combine)"})
                collective(c, what, CollectiveKind::all_to_all, PlanAxis::expert, group_tokens * d(moe.top_k) * D * act,
                           moe_fraction);
    }
    return c;
}

PhaseCost ChipModel::phase(bool decode, double seqs, double len) const {
    const ModelSpec& m = s_.model;
    PhaseCost p;
    p.tokens = decode ? seqs : seqs * len;
    p.context = len;
    p.layers = d(m.n_layers);
    p.per_layer = layer(decode, seqs, len);
    const LayerCost& c = p.per_layer;

    // Logits: every decode token, only the last token of each prompt; the vocabulary split over tensor.
    LayerCost logits;
    matmul(logits, seqs, d(m.d_model), d(m.vocab_size) / tp_, 1, 1);
    p.output_layer_s = logits.matmul_s;
    std::string pipeline_level;
    if (s_.plan.pp > 1) {
        const auto group = group_footprint(s_.mesh, {axis_name(PlanAxis::pipeline)}, "plan");
        const double bytes = p.tokens * d(m.d_model) * bytes_per_element(kActivations);
        const CollectiveCost send =
            collective_cost(s_.cluster, group, CollectiveKind::permute, collective_link_bytes(s_.chip, CollectiveKind::permute, bytes));
        p.pipeline_s = d(s_.plan.pp - 1) * send.time_s();
        pipeline_level = send.bottleneck;
    }
    p.time_s = p.layers * c.time_s() + p.output_layer_s + p.pipeline_s;

    // What bounds the pass: each part goes to the side of its own ridge.
    const bool attention_compute = c.attention_compute_s >= c.attention_memory_s;
    p.compute_s = p.layers * (c.matmul_compute_bound_s + (attention_compute ? c.attention_s() : 0.0)) +
                  (logits.matmul_compute_bound_s);
    p.weights_s = p.layers * (c.matmul_s - c.matmul_compute_bound_s) + (logits.matmul_s - logits.matmul_compute_bound_s);
    p.kv_s = attention_compute ? 0.0 : p.layers * c.attention_s();
    p.network_s = p.layers * c.collective_s + p.pipeline_s;
    p.matmuls_compute_bound = c.matmul_compute_bound_s * 2.0 >= c.matmul_s;
    std::string level = pipeline_level;
    double largest = 0;
    for (const CollectiveUse& use : c.collectives)
        if (use.time_s > largest) {
            largest = use.time_s;
            level = use.bottleneck;
        }
    const double worst = std::max({p.compute_s, p.weights_s, p.kv_s, p.network_s});
    if (worst == p.compute_s) p.bound = {Bound::compute, ""};
    else if (worst == p.weights_s) p.bound = {Bound::weights, ""};
    else if (worst == p.kv_s) p.bound = {Bound::kv_cache, ""};
    else p.bound = {Bound::network, level};
    return p;
}

// Parameters of the routed experts (what expert parallelism splits further).
double routed_expert_params(const ModelSpec& m) {
    if (!m.moe) return 0;
    const double matrices = m.mlp == MlpKind::gated ? 3.0 : 2.0;
    return d(m.moe_layers()) * d(m.moe->n_experts) * matrices * d(m.d_model) * d(m.moe->d_ff_expert);
}

}  // namespace

void check_serving_plan(const ModelSpec& m, const ChipSpec& chip, const ServingPlan& plan, double batch_seqs) {
    if (plan.tp < 1 || plan.pp < 1 || plan.ep < 1 || plan.dp < 1)
        throw InputError(kRequest, "tp", "parallel degrees must be at least 1");
    if (m.n_heads % plan.tp != 0)
        throw InputError(kRequest, "tp", "tensor parallelism " + text(plan.tp) + " does not divide the " + text(m.n_heads) +
                                         " query heads of " + m.name);
    if (!m.mla && m.n_kv_heads % plan.tp != 0)
        throw InputError(kRequest, "tp", "tensor parallelism " + text(plan.tp) + " does not divide the " + text(m.n_kv_heads) +
                                         " KV heads of " + m.name);
    if (m.n_layers % plan.pp != 0)
        throw InputError(kRequest, "pp", text(m.n_layers) + " layers do not split into " + text(plan.pp) + " pipeline stages");
    if (plan.ep > 1 && !m.moe) throw InputError(kRequest, "ep", m.name + " has no experts to spread (expert parallelism needs an MoE model)");
    if (m.moe && m.moe->n_experts % plan.ep != 0)
        throw InputError(kRequest, "ep", "expert parallelism " + text(plan.ep) + " does not divide the " +
                                         text(m.moe->n_experts) + " experts");
    if (plan.dp % plan.ep != 0)
        throw InputError(kRequest, "ep", "expert parallelism " + text(plan.ep) + " spreads experts over data-parallel replicas: it must divide dp " +
                                         text(plan.dp));
    if (batch_seqs < d(plan.dp) || std::fmod(batch_seqs, d(plan.dp)) != 0.0)
        throw InputError(kRequest, "batch", "a batch of " + text(static_cast<std::int64_t>(batch_seqs)) +
                                            " sequences does not split over " + text(plan.dp) + " replicas");
    if (!chip.supports(plan.compute()))
        throw InputError(kRequest, "weights_dtype", chip.name + " has no " + std::string(dtype_name(plan.weights)) + " arithmetic");
    if (plan.kv_cache == Dtype::fp8 && !chip.supports(Dtype::fp8))
        throw InputError(kRequest, "kv_dtype", chip.name + " has no fp8 arithmetic for an fp8 KV cache");
}

ServingReport simulate_serving(const ServingScenario& s) {
    check_serving_plan(s.model, s.chip, s.plan, s.batch_seqs);
    const ModelSpec& m = s.model;
    const ChipModel chip(s);
    ServingReport r;
    const double batch = s.batch_per_replica();
    const double pp = d(s.plan.pp), tp = d(s.plan.tp), ep = d(s.plan.ep);

    // Prefill: one prompt alone (time to first token), and the replica's batch of prompts together.
    r.prefill = chip.phase(false, 1, s.input_len);
    const PhaseCost batch_prefill = chip.phase(false, batch, s.input_len);
    // Pipelined over its stages, a batch of prompts keeps every stage busy.
    r.prefill_batch_s = batch_prefill.layers * batch_prefill.per_layer.time_s() / pp + batch_prefill.output_layer_s +
                        batch_prefill.pipeline_s;

    // Decode: the batch splits into micro-batches that keep the pipeline full; a token crosses every stage.
    const double microbatches = std::min(pp, batch);
    const double context = s.input_len + s.output_len / 2.0;  // mean over the generation
    r.decode = chip.phase(true, batch / microbatches, context);
    const double tpot = r.decode.time_s;
    const double replicas = d(s.plan.dp), chips = d(s.plan.chips());
    r.decode_tokens_per_s = replicas * decode_tokens_per_s(batch, tpot);
    r.output_tokens_per_s = replicas * batch * s.output_len / (s.output_len * tpot + r.prefill_batch_s);
    r.output_tokens_per_s_per_chip = r.output_tokens_per_s / chips;
    r.tokens_per_s_per_user = 1.0 / tpot;
    r.requests_per_s = r.output_tokens_per_s / s.output_len;
    r.kv_cache_bytes_per_token = kv_cache_bytes_per_token(m, s.plan.kv_cache);
    r.kv_tokens_freed_per_step = kv_tokens_freed_per_step(s.batch_seqs, s.input_len, s.output_len);
    if (const auto cost_per_s = cost_usd(s.chip, chips, 1.0)) r.cost_per_million_output_tokens_usd = *cost_per_s / r.output_tokens_per_s * 1e6;

    // Memory per chip.
    const double routed = routed_expert_params(m);
    const double shared = count_params(m).total - routed;
    r.memory.weights_bytes = (shared / (tp * pp) + routed / (tp * pp * ep)) * bytes_per_element(s.plan.weights);
    const double kv_split = m.mla ? 1.0 : tp;  // an MLA latent is not split by heads
    const double kv_per_seq = (s.input_len + s.output_len) * r.kv_cache_bytes_per_token / (kv_split * pp);
    r.memory.kv_cache_bytes = batch * kv_per_seq;
    const double widest = m.moe ? d(m.moe->top_k + m.moe->n_shared_experts) * d(m.moe->d_ff_expert)
                                : d(m.d_ff);
    const double act = bytes_per_element(kActivations);
    const double prompt_working_set = act * s.input_len * (4.0 * d(m.d_model) + 3.0 * widest / tp);
    const double logits_per_seq = 4.0 * d(m.vocab_size) / tp;  // fp32
    r.memory.activations_bytes = prompt_working_set + batch * logits_per_seq;
    r.hbm_bytes = s.chip.hbm_bytes;
    r.fits = r.memory.total_bytes() <= r.hbm_bytes;
    if (!r.fits) {
        r.overflow_bytes = r.memory.total_bytes() - r.hbm_bytes;
        r.overflow = r.memory.weights_bytes > r.hbm_bytes
                         ? "the weights alone exceed HBM"
                         : (r.memory.weights_bytes + r.memory.activations_bytes > r.hbm_bytes
                                ? "weights and the prompt's activations exceed HBM"
                                : "the KV cache of the batch at this context exceeds what the weights leave");
    }
    r.max_batch_seqs = replicas * max_sequences_that_fit(r.hbm_bytes - r.memory.weights_bytes - prompt_working_set,
                                                         kv_per_seq + logits_per_seq);

    if (m.moe) {
        MoeDecode moe;
        moe.experts = d(m.moe->n_experts);
        moe.top_k = d(m.moe->top_k);
        moe.tokens_per_group = r.decode.tokens * ep;
        moe.experts_touched_per_layer = expected_experts_touched(moe.experts, moe.top_k, moe.tokens_per_group);
        moe.experts_touched_per_chip = moe.experts_touched_per_layer / ep;
        const double matrices = m.mlp == MlpKind::gated ? 3.0 : 2.0;
        moe.expert_bytes_per_chip = moe.experts_touched_per_chip * matrices * d(m.d_model) * d(m.moe->d_ff_expert) / tp *
                                    bytes_per_element(s.plan.weights);
        r.moe = moe;
    }
    return r;
}

ServingCurve serving_curve(ServingScenario scenario, const std::vector<double>& batches) {
    ServingCurve curve;
    for (double batch : batches) {
        if (batch < d(scenario.plan.dp) || std::fmod(batch, d(scenario.plan.dp)) != 0.0) continue;
        scenario.batch_seqs = batch;
        const ServingReport r = simulate_serving(scenario);
        curve.points.push_back({batch, r.decode.time_s, r.prefill.time_s, r.output_tokens_per_s,
                                r.output_tokens_per_s_per_chip, r.tokens_per_s_per_user, r.decode.bound,
                                r.decode.matmuls_compute_bound, r.fits});
        if (curve.critical_batch_seqs == 0 && r.decode.matmuls_compute_bound) curve.critical_batch_seqs = batch;
    }
    return curve;
}

Disaggregation disaggregate(const ServingScenario& s, const ServingReport& r, double requests_per_s) {
    Disaggregation plan;
    plan.requests_per_s = requests_per_s;
    const double batch = s.batch_per_replica();
    // A prefill replica pipelines prompts over its stages; a decode replica finishes its batch every output_len steps.
    const double prefill_s = r.prefill.time_s / d(s.plan.pp);
    plan.prefill_per_decode = prefill_servers_per_decode_server(prefill_s, r.decode.time_s, batch, s.output_len);
    plan.prefill_replicas = static_cast<std::int64_t>(std::ceil(requests_per_s * prefill_s));
    plan.decode_replicas = static_cast<std::int64_t>(std::ceil(requests_per_s * s.output_len * r.decode.time_s / batch));
    plan.prefill_chips = plan.prefill_replicas * s.plan.replica_chips();
    plan.decode_chips = plan.decode_replicas * s.plan.replica_chips();
    return plan;
}

}  // namespace ridgeline
