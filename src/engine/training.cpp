#include "engine/training.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace ridgeline {

double matmul_efficiency(const ChipEfficiency& e, Dtype dtype, double m, double k, double n) {
    const double best = bytes_per_element(dtype) <= 1.0 ? e.matmul_max_fp8 : e.matmul_max;
    if (e.matmul_half_dim <= 0) return best;
    // Tiles of about half_dim: a dimension of that size wastes half of each tile's work.
    const auto tile = [&](double x) { return x / (x + e.matmul_half_dim); };
    return best * tile(m) * tile(k) * tile(n);
}

namespace {

double d(std::int64_t value) { return static_cast<double>(value); }

struct CommTotals {
    double tensor = 0, context = 0, expert = 0, weights = 0;  // per micro-batch, one phase
    std::string tensor_level, context_level, expert_level, weights_level;
};

struct PerStep {
    double gradients = 0, weight_gathers = 0;
    std::string level;
};

// One layer's time on one chip for one micro-batch, split by what bounds it.
struct LayerTime {
    double matmul_fwd = 0, attention_fwd = 0, elementwise_fwd = 0, launches_fwd = 0;
    bool matmul_memory_bound = false;
    CommTotals comm_fwd, comm_bwd;
    PerStep per_step;
    [[nodiscard]] double compute_fwd() const { return matmul_fwd + attention_fwd + elementwise_fwd + launches_fwd; }
};

class Simulator {
public:
    explicit Simulator(const TrainingScenario& s) : s_(s) {}

    TrainingReport run();

private:
    double peak(Dtype dtype) const { return s_.chip.peak_flops(dtype); }
    double hbm_Bps() const { return s_.chip.hbm_bw_Bps * s_.chip.efficiency.hbm; }
    double axis(const std::string& name) const {
        const auto it = s_.plan.axes.find(name);
        return it == s_.plan.axes.end() ? 1.0 : d(it->second);
    }

    CollectiveCost cost(const DerivedCollective& c) const {
        const auto group = group_footprint(s_.mesh, c.axes, "plan");
        return collective_cost(s_.cluster, group, c.kind, c.bytes / s_.chip.efficiency.collective);
    }

    LayerTime time_layer(const LayerWork& work) const;
    void check_plan() const;

    const TrainingScenario& s_;
};

void add_comm(double& total, std::string& level, const CollectiveCost& cost) {
    total += cost.time_s();
    if (!cost.bottleneck.empty()) level = cost.bottleneck;
}

LayerTime Simulator::time_layer(const LayerWork& work) const {
    LayerTime t;
    const ChipEfficiency& e = s_.chip.efficiency;
    const double act_bytes = 2.0;
    double output_elements = 0;
    for (const DerivedMatmul& m : work.matmuls) {
        const double flops = m.flops();
        const double compute_s = flops / (peak(s_.plan.compute) * matmul_efficiency(e, s_.plan.compute, m.rows, m.contract, m.cols));
        const double bytes = (m.rows * m.contract + m.rows * m.cols) * m.instances * act_bytes + m.weight_elements * 2.0;
        const double memory_s = bytes / hbm_Bps();
        t.matmul_fwd += std::max(compute_s, memory_s);
        t.matmul_memory_bound = t.matmul_memory_bound || memory_s > compute_s;
        output_elements += m.rows * m.cols * m.instances;
        // Routed tokens are permuted into expert order and back: two reads and two writes of each copy.
        if (m.routed) output_elements += 2.0 * m.rows * m.contract * m.instances;
    }
    // Flash-attention tiles are poorly filled at short sequences (and the causal mask wastes a larger share).
    const double seq_fill = e.attention_half_seq > 0 ? s_.seq_len / (s_.seq_len + e.attention_half_seq) : 1.0;
    t.attention_fwd = work.attention_flops / (peak(Dtype::bf16) * e.attention * seq_fill);
    // Norms, residual adds, activations, rotary: each matmul output and the residual stream are
    // read and written a few times by memory-bound kernels.
    const double elementwise_bytes = (2.0 * output_elements + 8.0 * work.local_tokens * d(s_.model.d_model)) * act_bytes;
    t.elementwise_fwd = elementwise_bytes / hbm_Bps();
    const double kernels = d(static_cast<std::int64_t>(work.matmuls.size())) + 8.0;
    t.launches_fwd = kernels * e.kernel_overhead_s;

    for (const DerivedCollective& c : work.collectives) {
        const CollectiveCost cc = cost(c);
        if (c.phase == CommPhase::per_step) {
            (c.kind == CollectiveKind::all_gather ? t.per_step.weight_gathers : t.per_step.gradients) += cc.time_s();
            if (!cc.bottleneck.empty()) t.per_step.level = cc.bottleneck;
            continue;
        }
        CommTotals& totals = c.phase == CommPhase::forward ? t.comm_fwd : t.comm_bwd;
        switch (c.role) {
            case CommRole::weights: add_comm(totals.weights, totals.weights_level, cc); break;
            case CommRole::context: add_comm(totals.context, totals.context_level, cc); break;
            case CommRole::experts: add_comm(totals.expert, totals.expert_level, cc); break;
            case CommRole::activations: add_comm(totals.tensor, totals.tensor_level, cc); break;
        }
    }
    return t;
}

void Simulator::check_plan() const {
    check_training_plan(s_.model, s_.plan);
    if (s_.mesh.size() != s_.cluster.chips())
        throw InputError("plan", "axes", "the plan's axes do not multiply to the chip count");
}

TrainingReport Simulator::run() {
    check_plan();
    const ModelSpec& model = s_.model;
    const TrainingPlan& plan = s_.plan;
    TrainingReport report;
    MicroBatch workload;
    workload.micro_batch_seqs = plan.micro_batch_seqs;
    workload.seq_len = s_.seq_len;

    const double pp = axis(plan.pipeline_axis), tp = axis("tensor"), cp = axis("context");
    // The slowest (largest) stage sets the pace of the pipeline.
    const double layers_per_stage =
        plan.stage_layers.empty() ? d(model.n_layers) / pp
                                  : d(*std::max_element(plan.stage_layers.begin(), plan.stage_layers.end()));
    const double moe_fraction = model.moe ? d(model.moe_layers()) / d(model.n_layers) : 0.0;

    const LayerWork dense_work = derive_layer_work(model, s_.strategy, plan.axes, workload, false);
    const LayerWork moe_work = model.moe ? derive_layer_work(model, s_.strategy, plan.axes, workload, true) : dense_work;
    report.collectives = (model.moe ? moe_work : dense_work).collectives;
    const LayerTime dense = time_layer(dense_work);
    const LayerTime moe = time_layer(moe_work);
    const auto mix = [&](auto field) { return (1.0 - moe_fraction) * field(dense) + moe_fraction * field(moe); };

    // Per layer, per micro-batch.
    const double matmul_fwd = mix([](const LayerTime& t) { return t.matmul_fwd; });
    const double attention_fwd = mix([](const LayerTime& t) { return t.attention_fwd; });
    const double elementwise_fwd = mix([](const LayerTime& t) { return t.elementwise_fwd; });
    const double launches_fwd = mix([](const LayerTime& t) { return t.launches_fwd; });
    const double compute_fwd = matmul_fwd + attention_fwd + elementwise_fwd + launches_fwd;
    // Backward: two GEMMs per matmul, attention ~2.5x (it recomputes the probabilities).
    const double matmul_bwd = 2.0 * matmul_fwd, attention_bwd = 2.5 * attention_fwd;
    const double compute_bwd = matmul_bwd + attention_bwd + 2.0 * elementwise_fwd + 2.0 * launches_fwd;
    double recompute = 0;
    if (plan.recompute == Recompute::full) recompute = compute_fwd;
    if (plan.recompute == Recompute::selective) recompute = attention_fwd + elementwise_fwd;

    // Exposed communication per layer and micro-batch: tensor-parallel collectives sit on the
    // critical path unless overlapped with the GEMMs they feed; ring attention hides under the
    // attention core; weight gathers are prefetched under the layer's compute.
    const auto exposed = [&](double comm, double cover, bool overlapped) { return overlapped ? std::max(0.0, comm - cover) : comm; };
    const double tp_exposed =
        exposed(mix([](const LayerTime& t) { return t.comm_fwd.tensor; }), matmul_fwd, plan.overlap_tensor_parallel) +
        exposed(mix([](const LayerTime& t) { return t.comm_bwd.tensor; }), matmul_bwd, plan.overlap_tensor_parallel);
    const double cp_exposed = exposed(mix([](const LayerTime& t) { return t.comm_fwd.context; }), attention_fwd, true) +
                              exposed(mix([](const LayerTime& t) { return t.comm_bwd.context; }), attention_bwd, true);
    const double ep_exposed = mix([](const LayerTime& t) { return t.comm_fwd.expert + t.comm_bwd.expert; });
    const double fsdp_exposed =
        exposed(mix([](const LayerTime& t) { return t.comm_fwd.weights; }), compute_fwd, plan.overlap_data_parallel) +
        exposed(mix([](const LayerTime& t) { return t.comm_bwd.weights; }), compute_bwd, plan.overlap_data_parallel);

    // The output layer (vocabulary split over tensor) runs on the last stage.
    const double tokens_per_replica = plan.micro_batch_seqs * s_.seq_len / cp;
    const double vocab_local = d(model.vocab_size) / tp;
    const double logits_flops = 2.0 * tokens_per_replica * d(model.d_model) * vocab_local;
    const double logits_fwd = logits_flops / (peak(plan.compute) * matmul_efficiency(s_.chip.efficiency, plan.compute, tokens_per_replica, d(model.d_model), vocab_local)) +
                              3.0 * tokens_per_replica * vocab_local * 4.0 / hbm_Bps();
    const double logits_time = 3.0 * logits_fwd;

    const double stage_fwd = layers_per_stage * compute_fwd;
    const double stage_bwd = layers_per_stage * (compute_bwd + recompute);
    const double stage_comm = layers_per_stage * (tp_exposed + cp_exposed + ep_exposed + fsdp_exposed);
    const double per_microbatch = stage_fwd + stage_bwd + stage_comm + logits_time;
    report.per_layer = {compute_fwd, compute_bwd, recompute, tp_exposed + cp_exposed + ep_exposed + fsdp_exposed};

    // Pipeline: a micro-batch's activations cross each stage boundary forward and back.
    double p2p = 0;
    std::string p2p_level;
    if (pp > 1) {
        DerivedCollective send{"pipeline send", CollectiveKind::permute, {plan.pipeline_axis},
                               dense_work.local_tokens * d(model.d_model) * 2.0, CommPhase::forward, CommRole::activations};
        const CollectiveCost cc = cost(send);
        p2p = 2.0 * cc.time_s();
        p2p_level = cc.bottleneck;
    }
    const double m = plan.microbatches;
    double bubble_chunks = 0;
    switch (plan.schedule) {
        case PipelineSchedule::gpipe:
        case PipelineSchedule::one_f_one_b: bubble_chunks = pp - 1.0; break;
        case PipelineSchedule::interleaved: bubble_chunks = (pp - 1.0) / plan.virtual_stages; break;
    }
    const double bubble = bubble_chunks * per_microbatch;

    // Once per step: gradient reduction under the last backward pass, weight gathers under the next forward.
    const double grad_comm = layers_per_stage * mix([](const LayerTime& t) { return t.per_step.gradients; });
    const double gather_comm = layers_per_stage * mix([](const LayerTime& t) { return t.per_step.weight_gathers; });
    const double step_comm = exposed(grad_comm, stage_bwd, plan.overlap_data_parallel) +
                             exposed(gather_comm, stage_fwd, plan.overlap_data_parallel);
    const std::string step_level = (model.moe ? moe : dense).per_step.level;

    // Memory per chip.
    const double layer_weights = (1.0 - moe_fraction) * dense_work.weight_elements + moe_fraction * moe_work.weight_elements;
    const double fsdp = axis("fsdp");
    const double embedding_weights = d(model.vocab_size) * d(model.d_model) / (tp * fsdp) * (model.tied_embeddings || pp > 1 ? 1.0 : 2.0);
    const double local_params = layers_per_stage * layer_weights + embedding_weights;
    double optimizer_shards = 1;
    if (plan.zero_stage >= 1)
        for (const auto& a : s_.strategy.optimizer_shard_axes)
            if (a != "fsdp") optimizer_shards *= axis(a);
    double gradient_shards = 1;
    if (plan.zero_stage >= 2)
        for (const auto& a : s_.strategy.optimizer_shard_axes)
            if (a != "fsdp") gradient_shards *= axis(a);
    report.memory.parameters_bytes = local_params * 2.0;
    report.memory.gradients_bytes = local_params * 4.0 / gradient_shards;  // fp32 accumulation
    report.memory.optimizer_bytes = plan.offload_optimizer ? 0.0 : local_params * 12.0 / optimizer_shards;  // master + 2 moments
    // Activations: D-wide tensors follow the residual stream's sharding, the rest is split over tensor too.
    // Attention runs fused (flash), so no recompute mode keeps the softmax probabilities.
    const SavedTensors saved = saved_tensors(plan.recompute) & ~static_cast<unsigned>(SavedTensor::attention_probs);
    const SavedTensors d_wide = saved & (static_cast<unsigned>(SavedTensor::layer_input) | static_cast<unsigned>(SavedTensor::attention_norm_output) |
                                         static_cast<unsigned>(SavedTensor::mlp_norm_input) | static_cast<unsigned>(SavedTensor::mlp_norm_output));
    const double d_wide_elements = saved_elements_per_token_per_layer(model, s_.seq_len, d_wide);
    const double other_elements = saved_elements_per_token_per_layer(model, s_.seq_len, saved) - d_wide_elements;
    const double per_layer_activation = (d_wide_elements * dense_work.local_tokens + other_elements * tokens_per_replica / tp) * 2.0;
    double in_flight = std::min(m, pp);
    if (plan.schedule == PipelineSchedule::gpipe) in_flight = m;
    if (plan.schedule == PipelineSchedule::interleaved) in_flight *= 1.0 + (pp - 1.0) / (pp * plan.virtual_stages);
    report.memory.activations_bytes = per_layer_activation * layers_per_stage * in_flight;
    report.memory.buffers_bytes = tokens_per_replica * vocab_local * 4.0 +  // fp32 logits
                                  (fsdp > 1 ? 2.0 * layer_weights * fsdp * 2.0 : 0.0);  // two gathered layers in flight
    report.hbm_bytes = s_.chip.hbm_bytes;
    report.fits = report.memory.total_bytes() <= s_.chip.hbm_bytes;

    // Optimizer: Adam streams the local master weights, gradients and moments through HBM once.
    const double optimizer_s = plan.offload_optimizer
                                   ? local_params / optimizer_shards * 16.0 / s_.chip.host_link_Bps
                                   : local_params / optimizer_shards * 30.0 / hbm_Bps();

    const double matmul_total = m * layers_per_stage * (matmul_fwd + matmul_bwd) + m * logits_time;
    const std::string matmul_bound = dense.matmul_memory_bound ? "memory" : "compute";
    report.components = {
        {"matmuls (incl. output layer)", matmul_total, matmul_bound},
        {"attention", m * layers_per_stage * (attention_fwd + attention_bwd), "compute"},
        {"elementwise (norms, activations)", m * layers_per_stage * 3.0 * elementwise_fwd, "memory"},
        {"kernel launches", m * layers_per_stage * 3.0 * launches_fwd, "latency"},
        {"recomputation", m * layers_per_stage * recompute, "compute"},
        {"tensor-parallel comms (exposed)", m * layers_per_stage * tp_exposed, dense.comm_fwd.tensor_level},
        {"context-parallel comms (exposed)", m * layers_per_stage * cp_exposed, dense.comm_fwd.context_level},
        {"expert all-to-all (exposed)", m * layers_per_stage * ep_exposed, moe.comm_fwd.expert_level},
        {"weight gathers (exposed)", m * layers_per_stage * fsdp_exposed, dense.comm_fwd.weights_level},
        {"pipeline bubble", bubble, "pipeline"},
        {"pipeline sends", m * p2p, p2p_level},
        {"gradient sync (exposed)", step_comm, step_level},
        {"optimizer step", optimizer_s, plan.offload_optimizer ? "host link" : "memory"},
    };
    report.step_time_s = 0;
    double largest = -1;
    for (const auto& c : report.components) {
        report.step_time_s += c.time_s;
        if (c.time_s > largest) {
            largest = c.time_s;
            report.bound = c.bound;
        }
    }
    report.tokens_per_step = s_.global_batch_seqs * s_.seq_len;
    report.tokens_per_s = report.tokens_per_step / report.step_time_s;
    report.model_flops_per_token = flops_per_token(model, s_.seq_len, true).training();
    const double chips = d(s_.cluster.chips());
    report.mfu = report.tokens_per_s * report.model_flops_per_token / (chips * peak(plan.compute));
    report.hfu = report.tokens_per_s * training_flops_with_recompute(model, s_.seq_len, true, plan.recompute) /
                 (chips * peak(plan.compute));
    return report;
}

}  // namespace

void check_training_plan(const ModelSpec& m, const TrainingPlan& plan) {
    const auto axis = [&](const std::string& name) {
        const auto it = plan.axes.find(name);
        return it == plan.axes.end() ? 1.0 : d(it->second);
    };
    const double tp = axis("tensor");
    if (std::fmod(d(m.n_heads), tp) != 0.0)
        throw InputError("plan", "tensor", "tensor parallelism " + std::to_string(static_cast<long long>(tp)) +
                                               " does not divide the " + std::to_string(m.n_heads) + " query heads");
    if (!m.mla && std::fmod(d(m.n_kv_heads), tp) != 0.0)
        throw InputError("plan", "tensor", "tensor parallelism " + std::to_string(static_cast<long long>(tp)) +
                                               " does not divide the " + std::to_string(m.n_kv_heads) + " KV heads");
    const double pp = axis(plan.pipeline_axis);
    if (!plan.stage_layers.empty()) {
        std::int64_t total = 0;
        for (auto layers : plan.stage_layers) total += layers;
        if (d(static_cast<std::int64_t>(plan.stage_layers.size())) != pp)
            throw InputError("plan", "stage_layers", std::to_string(plan.stage_layers.size()) + " stages given for " +
                                                         std::to_string(static_cast<long long>(pp)) + " pipeline ranks");
        if (total != m.n_layers)
            throw InputError("plan", "stage_layers", "the stages hold " + std::to_string(total) + " layers, not the model's " +
                                                         std::to_string(m.n_layers));
    } else if (std::fmod(d(m.n_layers), pp * plan.virtual_stages) != 0.0)
        throw InputError("plan", plan.pipeline_axis, std::to_string(m.n_layers) + " layers do not split into " +
                                                         std::to_string(static_cast<long long>(pp * plan.virtual_stages)) +
                                                         " pipeline stages");
    if (m.moe && std::fmod(d(m.moe->n_experts), axis("expert")) != 0.0)
        throw InputError("plan", "expert", "expert parallelism does not divide the " + std::to_string(m.moe->n_experts) + " experts");
    if (plan.microbatches < 1 || plan.micro_batch_seqs < 1)
        throw InputError("plan", "micro_batch", "the global batch does not split into whole micro-batches");
}

TrainingReport simulate_training(const TrainingScenario& scenario) { return Simulator(scenario).run(); }

}  // namespace ridgeline
