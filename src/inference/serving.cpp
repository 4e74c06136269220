#include "inference/serving.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>
#include <unordered_map>

#include "collective/link_bytes.hpp"
#include "core/error.hpp"
#include "engine/cost.hpp"
#include "engine/roofline.hpp"
#include "inference/serving_rules.hpp"
#include "spec/plan_check.hpp"
#include "mesh/plan_axes.hpp"
#include "model/transformer_math.hpp"
#include "sharding/derive.hpp"

namespace ridgeline {

namespace {

double d(std::int64_t value) { return static_cast<double>(value); }
std::string text(std::int64_t value) { return std::to_string(value); }

constexpr Dtype kActivations = Dtype::bf16;
// Embeddings and the LM head stay 16-bit however the weights are quantised: quantisation methods
// replace a model's linear layers only (vLLM's Fp8Config.get_quant_method returns a method for
// LinearBase and FusedMoE layers, none for the vocabulary embedding or the LM head built on it).
constexpr Dtype kUnquantised = kActivations;

// What one chip of a replica computes and moves for a pass of `seqs` sequences: prefill of
// `len` tokens each (causal attention), or one decode step with `len` keys of context each.
class ChipModel {
public:
    explicit ChipModel(const ServingScenario& s)
        : s_(s), axes_(s.plan.axis_sizes()) {}

    // `queries` tokens per sequence in a decode pass (1 plus the drafts it verifies).
    [[nodiscard]] LayerCost layer(bool decode, double seqs, double len, double queries = 1) const;
    [[nodiscard]] PhaseCost phase(bool decode, double seqs, double len, double queries = 1) const;
    // One prediction module drafting a token for each sequence: projection, block, output head.
    [[nodiscard]] double draft_s(double seqs, double len) const;
    // The weights one chip holds: its stage's layers and its share of the embeddings, and
    // `draft_modules` prediction modules (the last stage's).
    [[nodiscard]] double weights_bytes(double draft_modules) const;

private:
    void add_layer(LayerCost& c, const LayerWork& work, bool decode, double len, double fraction) const;
    [[nodiscard]] double held_bytes(const LayerWork& work) const;
    void matmul(LayerCost& c, const Gemm& gemm, Dtype stored) const;
    void collective(LayerCost& c, const DerivedCollective& collective, double fraction) const;

    const ServingScenario& s_;
    AxisSizes axes_;
    // What a chip holds of a dense and of an MoE layer, noted from the first pass derived: weights do
    // not depend on the tokens, and deriving the layers again for them slowed the serving search.
    mutable std::array<std::optional<double>, 2> held_bytes_;
};

void ChipModel::matmul(LayerCost& c, const Gemm& gemm, Dtype stored) const {
    if (gemm.rows <= 0 || gemm.instances <= 0) return;
    // The chip's GEMM efficiency, tiles included: a decode GEMM of a few rows still runs whole tiles, so
    // its compute side approaches the weight streaming well below the ideal roofline's critical batch.
    const RooflineTime t = gemm_time(s_.chip, gemm, {kActivations, stored, s_.plan.arithmetic_for(stored)});
    const double weights = gemm.weight_elements * bytes_per_element(stored);
    c.matmul_flops += t.flops;
    c.weight_bytes += weights;
    c.activation_bytes += t.bytes - weights;
    c.matmul_compute_s += t.compute_s;
    c.matmul_memory_s += t.memory_s;
    c.matmul_s += t.lower_bound_s();
    if (t.compute_s >= t.memory_s) c.matmul_compute_bound_s += t.compute_s;
}

void ChipModel::collective(LayerCost& c, const DerivedCollective& d, double fraction) const {
    const auto group = group_footprint(s_.mesh, d.axes, "plan");
    const CollectiveCost cost = collective_cost(s_.cluster, group, d.kind, collective_link_bytes(s_.chip, d.kind, d.bytes));
    std::string axis;
    for (const auto& name : d.axes) axis += (axis.empty() ? "" : ",") + name;
    c.collective_s += cost.time_s() * fraction;
    for (CollectiveUse& use : c.collectives)
        if (use.what == d.what) {  // the same collective in dense and MoE layers
            use.bytes += d.bytes * fraction;
            use.time_s += cost.time_s() * fraction;
            return;
        }
    c.collectives.push_back({d.what, d.kind, axis, d.bytes * fraction, cost.time_s() * fraction, cost.bottleneck});
}

// `fraction` of the model's layers are like `work`: its GEMMs on the kernel model, the attention
// core reading (decode) or writing (prefill) the KV cache, the forward pass's collectives.
void ChipModel::add_layer(LayerCost& c, const LayerWork& work, bool decode, double len, double fraction) const {
    for (const DerivedMatmul& m : work.matmuls)
        matmul(c, {m.rows, m.contract, m.cols, m.instances * fraction, m.weight_elements * fraction},
               is_attention_projection(m.name) ? s_.plan.attention_weight_dtype() : s_.plan.weights);
    for (const DerivedCollective& d : work.collectives)
        if (d.phase == CommPhase::forward) collective(c, d, fraction);

    const AttentionCore& a = work.attention;
    const double kv_bytes = a.queries * a.kv_elements_per_token * bytes_per_element(s_.plan.kv_cache) * (decode ? a.keys : 1.0);
    const double bytes = a.hbm_bytes(decode, bytes_per_element(kActivations), bytes_per_element(s_.plan.kv_cache));
    // Decode: one query per sequence streams its cache (no causal tiles); prefill writes it.
    const RooflineTime t = attention_time(s_.chip, attention_family(s_.chip, s_.stack.attention), AttentionPassKind::forward, a.flops,
                                          bytes, decode ? 0.0 : len);
    c.attention_flops += a.flops * fraction;
    c.kv_bytes += kv_bytes * fraction;
    c.attention_compute_s += t.compute_s * fraction;
    c.attention_memory_s += t.memory_s * fraction;
}

LayerCost ChipModel::layer(bool decode, double seqs, double len, double queries) const {
    const ModelSpec& m = s_.model;
    MicroBatch pass;
    pass.micro_batch_seqs = seqs;
    pass.seq_len = decode ? queries : len;
    pass.context_len = decode ? len : 0.0;
    pass.weight_bytes = bytes_per_element(s_.plan.weights);
    pass.combine_experts_before_reduce = true;
    pass.forward_only = true;  // only the forward pass's collectives are priced
    LayerCost c;
    const double dense_fraction = d(m.dense_layers()) / d(m.n_layers);
    for (const bool moe_layer : {false, true}) {
        const double fraction = moe_layer ? 1.0 - dense_fraction : dense_fraction;
        if (fraction <= 0 || (moe_layer && !m.moe)) continue;
        const LayerWork work = derive_layer_work(m, s_.strategy, axes_, pass, moe_layer);
        add_layer(c, work, decode, len, fraction);
        if (!held_bytes_[moe_layer]) held_bytes_[moe_layer] = held_bytes(work);
    }
    return c;
}

PhaseCost ChipModel::phase(bool decode, double seqs, double len, double queries) const {
    const ModelSpec& m = s_.model;
    PhaseCost p;
    p.tokens = decode ? seqs * queries : seqs * len;
    p.context = len;
    p.layers = d(m.n_layers);
    p.per_layer = layer(decode, seqs, len, queries);
    const LayerCost& c = p.per_layer;

    // Logits: every decode token, only the last token of each prompt.
    LayerCost logits;
    const DerivedMatmul out = derive_output_work(m, s_.strategy, axes_, decode ? seqs * queries : seqs).logits;
    matmul(logits, {out.rows, out.contract, out.cols, out.instances, out.weight_elements}, kUnquantised);
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

double ChipModel::draft_s(double seqs, double len) const {
    const DerivedMatmul mtp = derive_mtp_projection(s_.model, s_.strategy, axes_, seqs);
    LayerCost projection;
    matmul(projection, {mtp.rows, mtp.contract, mtp.cols, mtp.instances, mtp.weight_elements}, s_.plan.weights);
    LayerCost logits;
    const DerivedMatmul out = derive_output_work(s_.model, s_.strategy, axes_, seqs).logits;
    matmul(logits, {out.rows, out.contract, out.cols, out.instances, out.weight_elements}, kUnquantised);
    // The module's block is a layer of the model (an MoE block where the model has them).
    return projection.matmul_s + layer(true, seqs, len).time_s() + logits.matmul_s;
}

// A layer's GEMM weights as this chip stores them (the attention projections may keep another
// dtype); its norms' few vectors are left out.
double ChipModel::held_bytes(const LayerWork& work) const {
    double attention = 0;
    for (const DerivedMatmul& m : work.matmuls)
        if (is_attention_projection(m.name)) attention += m.weight_elements;
    return (work.weight_elements - attention) * bytes_per_element(s_.plan.weights) +
           attention * bytes_per_element(s_.plan.attention_weight_dtype());
}

double ChipModel::weights_bytes(double draft_modules) const {
    const ModelSpec& m = s_.model;
    if ((m.dense_layers() > 0 && !held_bytes_[0]) || (m.moe && !held_bytes_[1])) (void)layer(true, 1, 1);
    const double dense = held_bytes_[0].value_or(0.0), moe = held_bytes_[1].value_or(0.0);
    // The input embedding and the output head, one of them where they are tied: a stage holds its share.
    const double head = derive_output_work(m, s_.strategy, axes_, 1.0).logits.weight_elements;
    const double vocabulary = (m.tied_embeddings ? 1.0 : 2.0) * head * bytes_per_element(kUnquantised);
    const double layers = d(m.dense_layers()) * dense + d(m.moe_layers()) * moe;
    // A prediction module's block is a layer like the model's last (an MoE block where the model has them).
    const double module = derive_mtp_projection(m, s_.strategy, axes_, 1.0).weight_elements * bytes_per_element(s_.plan.weights) +
                          (m.moe ? moe : dense);
    return (layers + vocabulary) / d(s_.plan.pp) + draft_modules * module;
}

}  // namespace

void check_serving_plan(const ModelSpec& m, const ChipSpec& chip, const Plan& plan, double batch_seqs) {
    if (plan.tp < 1 || plan.pp < 1 || plan.ep < 1 || plan.dp < 1)
        throw InputError(kRequest, "tp", "parallel degrees must be at least 1");
    if (plan.cp != 1) throw InputError(kRequest, "cp", "context parallelism is a training plan's axis; a deployment has none");
    if (plan.fsdp != 1) throw InputError(kRequest, "fsdp", "a deployment holds its weights whole per replica; fsdp is a training plan's axis");
    if (const auto fault = model_fault(m, plan, {0, batch_seqs, "batch"})) throw InputError(kRequest, fault->field, fault->message);
    // Serving splits its layers evenly (no uneven stages), and carves experts from the replicas.
    if (m.n_layers % plan.pp != 0)
        throw InputError(kRequest, "pp", text(m.n_layers) + " layers do not split into " + text(plan.pp) + " pipeline stages");
    if (plan.dp % plan.ep != 0)
        throw InputError(kRequest, "ep", "expert parallelism " + text(plan.ep) + " spreads experts over data-parallel replicas: it must divide dp " +
                                         text(plan.dp));
    if (!chip.supports(plan.arithmetic()))
        throw InputError(kRequest, "weights_dtype", chip.name + " has no " + std::string(dtype_name(plan.weights)) + " arithmetic");
    if (!chip.supports(plan.arithmetic_for(plan.attention_weight_dtype())))
        throw InputError(kRequest, "attention_weights_dtype",
                         chip.name + " has no " + std::string(dtype_name(plan.attention_weight_dtype())) + " arithmetic");
    if (plan.kv_cache == Dtype::fp8 && !chip.supports(Dtype::fp8))
        throw InputError(kRequest, "kv_dtype", chip.name + " has no fp8 arithmetic for an fp8 KV cache");
}

Mesh place_serving_plan(const Cluster& cluster, const Plan& plan) {
    std::vector<MeshAxis> axes;
    for (const auto& [name, size] : plan.axis_sizes()) axes.push_back({name, size});
    return place_mesh(cluster, axes, {});
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
    // A batch that does not split evenly (135 over 2 stages) runs micro-batches of 68 and 67: the
    // larger one paces the stages.
    const double microbatch = std::ceil(batch / std::min(pp, batch));
    const double context = s.input_len + s.output_len / 2.0;  // mean over the generation
    const SpeculativeDecoding& spec = s.speculative;
    r.decode = chip.phase(true, microbatch, context, 1.0 + d(spec.draft_tokens));
    if (spec.draft_tokens > 0) {
        // The drafts run one after another on the last stage, before the step that verifies them.
        r.draft_s = d(spec.draft_tokens) * chip.draft_s(microbatch, context);
        r.decode.time_s += r.draft_s;
        r.decode_tokens_per_step = spec.tokens_per_step();
    }
    const double tpot = r.tpot_s();
    const double replicas = d(s.plan.dp), chips = d(s.plan.chips());
    r.decode_tokens_per_s = replicas * decode_tokens_per_s(batch, tpot);
    r.output_tokens_per_s = replicas * batch * s.output_len / (s.output_len * tpot + r.prefill_batch_s);
    r.output_tokens_per_s_per_chip = r.output_tokens_per_s / chips;
    r.tokens_per_s_per_user = 1.0 / tpot;
    r.requests_per_s = r.output_tokens_per_s / s.output_len;
    r.kv_cache_bytes_per_token = kv_cache_bytes_per_token(m, s.plan.kv_cache);
    r.kv_tokens_freed_per_step = kv_tokens_freed_per_step(s.batch_seqs, s.input_len, s.output_len);
    if (const auto cost_per_s = cost_usd(s.chip, chips, 1.0)) r.cost_per_million_output_tokens_usd = *cost_per_s / r.output_tokens_per_s * 1e6;

    // Memory per chip. Drafting, the last stage also holds the prediction modules and their blocks' KV caches.
    const double draft_layers = d(s.speculative.draft_tokens);
    r.memory.weights_bytes = chip.weights_bytes(draft_layers);
    const double kv_split = d(m.kv_head_split(s.plan.tp));  // an MLA latent is not split by heads; replicated heads not further
    r.kv_cache_bytes_per_sequence = kv_cache_bytes_per_sequence(m, s.input_len + s.output_len, s.plan.kv_cache);
    const double kv_per_seq = r.kv_cache_bytes_per_sequence / (kv_split * pp) * (1.0 + draft_layers * pp / d(m.n_layers));
    r.memory.kv_cache_bytes = batch * kv_per_seq;
    const double widest = m.moe ? d(m.moe->top_k + m.moe->n_shared_experts) * d(m.moe->d_ff_expert)
                                : d(m.d_ff);
    const double act = bytes_per_element(kActivations);
    const double prompt_working_set = act * s.input_len * (4.0 * d(m.d_model) + 3.0 * widest / tp);
    const double logits_per_seq = derive_output_work(m, s.strategy, s.plan.axis_sizes(), 1.0).logits_bytes();
    r.memory.activations_bytes = prompt_working_set + batch * logits_per_seq;
    r.hbm_bytes = s.chip.hbm_bytes;
    r.fits = r.memory.total_bytes() <= r.hbm_bytes;
    if (!r.fits) r.cost_per_million_output_tokens_usd.reset();  // a deployment that cannot run has no cost
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
    if (!std::isfinite(r.prefill.time_s) || !std::isfinite(r.decode.time_s) || r.decode.time_s <= 0 || !std::isfinite(r.memory.total_bytes()))
        throw InputError(s.chip.name, "", "the chip, model and plan give no finite prefill or decode time; check their numbers");
    return r;
}

struct StepPricer::Impl {
    explicit Impl(const ServingScenario& s) : scenario(s), chip(scenario), windowed(s.model.window.has_value()) {}
    struct Sides {
        double compute_s = 0, memory_s = 0;
    };
    ServingScenario scenario;
    ChipModel chip;
    bool windowed;
    std::unordered_map<std::int64_t, double> dense_s;          // GEMMs and collectives by tokens, per layer
    std::unordered_map<std::int64_t, double> logits_s;         // by rows
    std::unordered_map<std::int64_t, Sides> prompt_attention;  // causal over a prompt of this length, per layer
    // A decode's attention is linear in its keys (FLOPs and cache bytes both), so two points per
    // batch size give it exactly; a sliding window caps the keys and is priced directly.
    std::unordered_map<std::int64_t, std::pair<Sides, Sides>> decode_attention;  // at kKeys and 2 kKeys keys a sequence

    // Not 0: a pass with no context is a one-token prompt to the layer model.
    static constexpr double kKeys = 1024;

    double dense(std::int64_t tokens) {
        auto [it, fresh] = dense_s.try_emplace(tokens, 0.0);
        if (fresh) {
            const LayerCost c = chip.layer(false, 1, d(tokens));
            it->second = c.matmul_s + c.collective_s;
        }
        return it->second;
    }
    double logits(std::int64_t rows) {
        auto [it, fresh] = logits_s.try_emplace(rows, 0.0);
        if (fresh) it->second = chip.phase(true, d(rows), 1).output_layer_s;
        return it->second;
    }
    Sides prompt(std::int64_t len) {
        auto [it, fresh] = prompt_attention.try_emplace(len);
        if (fresh && len > 0) {
            const LayerCost c = chip.layer(false, 1, d(len));
            it->second = {c.attention_compute_s, c.attention_memory_s};
        }
        return it->second;
    }
    double decode(std::int64_t seqs, double keys) {
        if (seqs == 0) return 0;
        if (windowed) return chip.layer(true, d(seqs), keys / d(seqs)).attention_s();
        auto [it, fresh] = decode_attention.try_emplace(seqs);
        if (fresh) {
            const LayerCost one = chip.layer(true, d(seqs), kKeys), two = chip.layer(true, d(seqs), 2 * kKeys);
            it->second = {{one.attention_compute_s, one.attention_memory_s}, {two.attention_compute_s, two.attention_memory_s}};
        }
        const auto& [one, two] = it->second;
        const double steps = keys / d(seqs) / kKeys - 1.0;  // from the first point, in units of kKeys
        return std::max(one.compute_s + (two.compute_s - one.compute_s) * steps, one.memory_s + (two.memory_s - one.memory_s) * steps);
    }
};

StepPricer::StepPricer(const ServingScenario& scenario) : impl_(std::make_unique<Impl>(scenario)) {
    if (scenario.plan.pp != 1) throw InputError(kRequest, "pp", "the request-level simulator runs replicas without pipeline stages (pp 1)");
}
StepPricer::~StepPricer() = default;

double StepPricer::step_s(const StepShape& step) {
    Impl& m = *impl_;
    std::int64_t tokens = step.decode_seqs;
    double layer_s = m.decode(step.decode_seqs, step.decode_keys);
    for (const PromptChunk& chunk : step.chunks) {
        tokens += chunk.tokens;
        // Causal attention of a chunk after `offset` cached tokens: the prompt's to its end less the part before.
        const Impl::Sides to_end = m.prompt(chunk.offset + chunk.tokens), before = m.prompt(chunk.offset);
        layer_s += std::max(to_end.compute_s - before.compute_s, to_end.memory_s - before.memory_s);
    }
    if (tokens == 0) return 0;
    layer_s += m.dense(tokens);
    return d(m.scenario.model.n_layers) * layer_s + (step.logit_rows > 0 ? m.logits(step.logit_rows) : 0.0);
}

ServingCurve serving_curve(ServingScenario scenario, const std::vector<double>& batches) {
    ServingCurve curve;
    for (double batch : batches) {
        if (batch < d(scenario.plan.dp) || std::fmod(batch, d(scenario.plan.dp)) != 0.0) continue;
        scenario.batch_seqs = batch;
        const ServingReport r = simulate_serving(scenario);
        curve.points.push_back({batch, r.tpot_s(), r.prefill.time_s, r.output_tokens_per_s,
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
    plan.prefill_per_decode = prefill_servers_per_decode_server(prefill_s, r.tpot_s(), batch, s.output_len);
    plan.prefill_replicas = static_cast<std::int64_t>(std::ceil(requests_per_s * prefill_s));
    plan.decode_replicas = static_cast<std::int64_t>(std::ceil(requests_per_s * s.output_len * r.tpot_s() / batch));
    plan.prefill_chips = plan.prefill_replicas * s.plan.replica_chips();
    plan.decode_chips = plan.decode_replicas * s.plan.replica_chips();
    return plan;
}

double serving_kernel_share(const ServingReport& r, double output_len) {
    const auto kernels_s = [](const PhaseCost& phase, double phase_s) {
        return phase.time_s > 0 ? phase_s * std::clamp(1.0 - phase.network_s / phase.time_s, 0.0, 1.0) : 0.0;
    };
    const double decode_s = output_len * r.tpot_s();
    const double total_s = r.prefill_batch_s + decode_s;
    return total_s > 0 ? (kernels_s(r.prefill, r.prefill_batch_s) + kernels_s(r.decode, decode_s)) / total_s : 0.0;
}

}  // namespace ridgeline
