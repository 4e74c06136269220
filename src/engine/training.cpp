#include "engine/training.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "collective/collective_memo.hpp"
#include "collective/link_bytes.hpp"
#include "core/error.hpp"
#include "engine/elementwise_kernels.hpp"
#include "engine/roofline.hpp"
#include "engine/stragglers.hpp"
#include "spec/plan_check.hpp"

namespace ridgeline {

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
    double matmul_bwd = 0, attention_bwd = 0, elementwise_bwd = 0, launches_bwd = 0;
    double norm_fwd = 0, activation_fwd = 0, mlp_up_fwd = 0, mla_up_fwd = 0, out_projection_fwd = 0;  // parts of the above a policy may recompute
    double tp_overlapped_fwd = 0, tp_overlapped_bwd = 0;  // GEMMs beside a tensor-parallel collective
    bool matmul_memory_bound = false;
    CommTotals comm_fwd, comm_bwd;
    PerStep per_step;
};

class LayoutCoster {
public:
    LayoutCoster(const TrainingScenario& s, CollectiveMemo* memo) : s_(s), memo_(memo) {}

    LayoutCostsReport run(const LayoutWork& work) const;

private:
    double peak(Dtype dtype) const { return s_.chip.peak_flops(dtype); }
    double hbm_Bps() const { return s_.chip.hbm_bw_Bps * s_.chip.efficiency.hbm; }
    double axis(const std::string& name) const { return s_.plan.size(name); }
    double axis(PlanAxis a) const { return s_.plan.size(a); }
    double group_size(const AxisList& axes) const {
        double size = 1;
        for (const auto& a : axes) size *= axis(a);
        return size;
    }
    // The least a kernel costs: the chip's measured GEMM floor, or its stated per-kernel overhead.
    double kernel_floor_s() const { return s_.chip.kernels ? s_.chip.kernels->gemm_launch_s : s_.chip.efficiency.kernel_overhead_s; }

    // The reference lives until the next call.
    const CollectiveCost& cost(const DerivedCollective& c) const {
        const std::vector<GroupDim>& group = footprint(c.axes);
        const double bytes = collective_link_bytes(s_.chip, c.kind, c.bytes);
        CollectiveOptions options;
        if (c.role == CommRole::experts && c.kind == CollectiveKind::all_to_all && s_.model.moe) {
            const MoeSpec& moe = *s_.model.moe;
            options.routed = {d(moe.top_k), d(moe.n_experts), d(moe.routing_groups), d(moe.routing_groups_per_token),
                              s_.plan.moe_dispatcher == "deepep"};
        }
        if (memo_ != nullptr) return memo_->cost(s_.cluster, group, c.kind, bytes, options.routed);
        scratch_ = collective_cost(s_.cluster, group, c.kind, bytes, options);
        return scratch_;
    }
    // A layer's collectives run over a few axis groups; each footprint is worked out once.
    const std::vector<GroupDim>& footprint(const AxisList& axes) const {
        for (const auto& [known, group] : footprints_)
            if (known == axes) return group;
        footprints_.emplace_back(axes, group_footprint(s_.mesh, axes, "plan"));
        return footprints_.back().second;
    }

    LayerTime time_layer(const LayerWork& work) const;

    const TrainingScenario& s_;
    CollectiveMemo* memo_;
    mutable CollectiveCost scratch_;
    mutable std::vector<std::pair<AxisList, std::vector<GroupDim>>> footprints_;
};

void add_comm(double& total, std::string& level, const CollectiveCost& cost, double efficiency = 1.0) {
    total += cost.time_s() / efficiency;
    if (!cost.bottleneck.empty()) level = cost.bottleneck;
}

LayerTime LayoutCoster::time_layer(const LayerWork& work) const {
    LayerTime t;
    const ChipSpec& chip = s_.chip;
    const double act_bytes = 2.0;
    const MatmulDtypes dtypes{Dtype::bf16, Dtype::bf16, s_.plan.precision};
    const bool measured = chip.kernels.has_value();
    for (const DerivedMatmul& m : work.matmuls) {
        const Gemm gemm{m.rows, m.contract, m.cols, m.instances, m.weight_elements};
        const RooflineTime time = gemm_time(chip, gemm, dtypes);
        const double backward_s = gemm_backward_s(chip, gemm, dtypes);
        t.matmul_fwd += time.lower_bound_s();
        t.matmul_bwd += backward_s;
        if (m.output_reduced) t.tp_overlapped_fwd += time.lower_bound_s();
        if (m.input_gradient_reduced) t.tp_overlapped_bwd += backward_s;
        if (m.name.ends_with("mlp_in") || m.name == "experts_in") t.mlp_up_fwd += time.lower_bound_s();
        if (m.name == "q_up" || m.name == "kv_up") t.mla_up_fwd += time.lower_bound_s();
        if (m.name == "out") t.out_projection_fwd += time.lower_bound_s();
        t.matmul_memory_bound = t.matmul_memory_bound || time.memory_s > time.compute_s;
        if (measured && dtypes.compute == Dtype::fp8) {
            // fp8 GEMMs quantise what they read (Transformer Engine): the input is cast forward
            // (read bf16, write fp8); backward the output gradient is cast, and both fp8 operands
            // of the weight gradient are written again transposed (Hopper's fp8 GEMMs take K-major).
            const double x = m.rows * m.contract * m.instances, dy = m.rows * m.cols * m.instances;
            t.elementwise_fwd += memory_bound_s(chip, "copy", 3.0 * x);
            t.elementwise_bwd += memory_bound_s(chip, "copy", 3.0 * dy + 2.0 * (x + dy));
        }
    }
    const double attention_flops = work.attention.flops;
    const std::string& family = attention_family(chip, s_.stack.attention);
    // Under context parallelism each kernel call holds a rank's s / cp queries, and its sequence ramp is theirs.
    const double kernel_seq_len = s_.seq_len / axis(PlanAxis::context);
    t.attention_fwd = attention_time(chip, family, AttentionPassKind::forward, attention_flops, 0.0, kernel_seq_len).lower_bound_s();
    t.attention_bwd = attention_time(chip, family, AttentionPassKind::backward, kAttentionBackwardRatio * attention_flops, 0.0,
                                     kernel_seq_len).lower_bound_s();
    for (const ElementwiseOp& op : work.elementwise) {
        const double bytes = op.elements * act_bytes;
        double forward_s = 0;
        if (measured) {
            const ElementwiseKernels k = elementwise_kernels(op.kind, s_.stack.fused_elementwise);
            forward_s = memory_bound_s(chip, k.forward, bytes, op.launches);
            t.elementwise_bwd += memory_bound_s(chip, k.backward, bytes * k.backward_bytes_ratio, op.launches);
        } else {
            forward_s = memory_bound_s(chip, "", bytes);
        }
        t.elementwise_fwd += forward_s;
        if (op.kind == ElementwiseKind::norm) t.norm_fwd += forward_s;
        if (op.kind == ElementwiseKind::gated_activation || op.kind == ElementwiseKind::plain_activation) t.activation_fwd += forward_s;
    }
    if (measured) {
        // Launches are in each measured kernel; what the framework adds between them is the stack's.
        const double f = s_.stack.fitted.layer_overhead_fraction;
        t.launches_fwd = f * (t.matmul_fwd + t.attention_fwd + t.elementwise_fwd);
        t.launches_bwd = f * (t.matmul_bwd + t.attention_bwd + t.elementwise_bwd);
    } else {
        const double kernels = d(static_cast<std::int64_t>(work.matmuls.size())) + 8.0;
        t.launches_fwd = kernels * chip.efficiency.kernel_overhead_s;
        t.elementwise_bwd = kMatmulBackwardRatio * t.elementwise_fwd;
        t.launches_bwd = kMatmulBackwardRatio * t.launches_fwd;
    }

    for (const DerivedCollective& c : work.collectives) {
        const CollectiveCost& cc = cost(c);
        if (c.phase == CommPhase::gradient || c.phase == CommPhase::optimizer) {
            (c.phase == CommPhase::optimizer ? t.per_step.weight_gathers : t.per_step.gradients) += cc.time_s();
            if (!cc.bottleneck.empty()) t.per_step.level = cc.bottleneck;
            continue;
        }
        CommTotals& totals = c.phase == CommPhase::forward ? t.comm_fwd : t.comm_bwd;
        switch (c.role) {
            case CommRole::weights:
                add_comm(totals.weights, totals.weights_level, cc, s_.stack.fitted.sharded_comm_efficiency);
                if (s_.stack.sharded_copies_per_rank) totals.weights += group_size(c.axes) * kernel_floor_s();
                break;
            case CommRole::context: add_comm(totals.context, totals.context_level, cc); break;
            case CommRole::experts: add_comm(totals.expert, totals.expert_level, cc); break;
            case CommRole::activations: add_comm(totals.tensor, totals.tensor_level, cc); break;
        }
    }
    return t;
}

LayoutCostsReport LayoutCoster::run(const LayoutWork& work) const {
    const ModelSpec& model = s_.model;
    const TrainingPlan& plan = s_.plan;
    LayoutCostsReport out;
    LayoutCosts& l = out.costs;

    const double pp = axis(PlanAxis::pipeline), tp = axis(PlanAxis::tensor), cp = axis(PlanAxis::context);
    l.pipeline_size = pp;
    // The slowest stage sets the pace of the pipeline: the last runs the output layer and the
    // multi-token prediction modules, a block each (Megatron-Core and DeepSeek-V3 place them there),
    // so an uneven split that leaves it a layer short may leave the pace to another stage.
    const double last_stage = plan.stage_layers.empty() ? d(model.n_layers) / pp : d(plan.stage_layers.back());
    l.last_stage_layers = last_stage + d(plan.mtp_depth);
    if (pp > 1)
        l.other_stage_layers = plan.stage_layers.empty() ? d(model.n_layers) / pp
                                                         : d(*std::max_element(plan.stage_layers.begin(), plan.stage_layers.end() - 1));
    l.layers_per_stage = std::max(l.last_stage_layers, l.other_stage_layers);
    const double moe_fraction = model.moe ? d(model.moe_layers()) / d(model.n_layers) : 0.0;

    const LayerWork& dense_work = work.dense;
    const LayerWork& moe_work = work.moe;
    const LayerTime dense = time_layer(dense_work);
    const LayerTime moe = time_layer(moe_work);
    const auto mix = [&](auto field) { return (1.0 - moe_fraction) * field(dense) + moe_fraction * field(moe); };

    using Cost = double LayoutCosts::*;
    using Time = double LayerTime::*;
    static constexpr std::pair<Cost, Time> kKernelParts[] = {
        {&LayoutCosts::matmul_fwd_s, &LayerTime::matmul_fwd}, {&LayoutCosts::matmul_bwd_s, &LayerTime::matmul_bwd},
        {&LayoutCosts::attention_fwd_s, &LayerTime::attention_fwd}, {&LayoutCosts::attention_bwd_s, &LayerTime::attention_bwd},
        {&LayoutCosts::elementwise_fwd_s, &LayerTime::elementwise_fwd}, {&LayoutCosts::elementwise_bwd_s, &LayerTime::elementwise_bwd},
        {&LayoutCosts::launches_fwd_s, &LayerTime::launches_fwd}, {&LayoutCosts::launches_bwd_s, &LayerTime::launches_bwd},
        {&LayoutCosts::norm_fwd_s, &LayerTime::norm_fwd}, {&LayoutCosts::activation_fwd_s, &LayerTime::activation_fwd},
        {&LayoutCosts::mlp_up_fwd_s, &LayerTime::mlp_up_fwd}, {&LayoutCosts::mla_up_fwd_s, &LayerTime::mla_up_fwd},
        {&LayoutCosts::out_projection_fwd_s, &LayerTime::out_projection_fwd}};
    for (const auto& part : kKernelParts) l.*part.first = mix([time = part.second](const LayerTime& t) { return t.*time; });
    l.tensor_comm_fwd_s = mix([](const LayerTime& t) { return t.comm_fwd.tensor; });
    l.tensor_comm_bwd_s = mix([](const LayerTime& t) { return t.comm_bwd.tensor; });
    l.context_comm_fwd_s = mix([](const LayerTime& t) { return t.comm_fwd.context; });
    l.context_comm_bwd_s = mix([](const LayerTime& t) { return t.comm_bwd.context; });
    l.expert_comm_s = mix([](const LayerTime& t) { return t.comm_fwd.expert + t.comm_bwd.expert; });
    l.weight_comm_fwd_s = mix([](const LayerTime& t) { return t.comm_fwd.weights; });
    l.weight_comm_bwd_s = mix([](const LayerTime& t) { return t.comm_bwd.weights; });
    l.weight_comm_blocks = s_.stack.sharded_comm_blocks;
    l.gradient_comm_s = mix([](const LayerTime& t) { return t.per_step.gradients; });
    l.gather_comm_s = mix([](const LayerTime& t) { return t.per_step.weight_gathers; });
    out.matmul_bound = dense.matmul_memory_bound ? Bound::memory : Bound::compute;
    out.tensor_level = dense.comm_fwd.tensor_level;
    out.context_level = dense.comm_fwd.context_level;
    out.expert_level = moe.comm_fwd.expert_level;
    out.weights_level = dense.comm_fwd.weights_level;
    out.step_level = (model.moe ? moe : dense).per_step.level;

    // The output layer and loss run on the last stage: the logits GEMM forward and its two backward
    // GEMMs, and the fp32 softmax cross-entropy forward and backward.
    const OutputWork& output = work.output;
    const DerivedMatmul& logits = output.logits;
    // fp8 recipes quantise the transformer blocks' GEMMs; the output layer stays bf16 unless the stack says otherwise.
    const bool fp8_logits = plan.precision != Dtype::fp8 || s_.stack.fp8_output_layer;
    const MatmulDtypes head_dtypes{Dtype::bf16, Dtype::bf16, fp8_logits ? plan.precision : Dtype::bf16};
    const MatmulDtypes block_dtypes{Dtype::bf16, Dtype::bf16, plan.precision};
    const Gemm logits_gemm{logits.rows, logits.contract, logits.cols, logits.instances, logits.weight_elements};
    l.logits_s = gemm_time(s_.chip, logits_gemm, head_dtypes).lower_bound_s() + gemm_backward_s(s_.chip, logits_gemm, head_dtypes);
    if (s_.chip.kernels) {
        // The loss reads the bf16 logits and writes their gradient, at the measured rate of the stack's cross-entropy.
        const char* loss = s_.stack.fp32_cross_entropy ? "cross_entropy_fwdbwd_fp32upcast" : "cross_entropy_fwdbwd_bf16";
        l.logits_s += memory_bound_s(s_.chip, loss, 2.0 * 2.0 * logits.rows * output.vocab_local);
    } else {
        l.logits_s += output.loss_bytes() / hbm_Bps();
    }
    // Each prediction module projects [h; emb] from 2D to D, then runs the shared head and its loss
    // again (its block is one more layer of the last stage, above).
    const DerivedMatmul& mtp = work.mtp_projection;
    if (plan.mtp_depth > 0) {
        const Gemm projection{mtp.rows, mtp.contract, mtp.cols, mtp.instances, mtp.weight_elements};
        l.logits_s = (1.0 + d(plan.mtp_depth)) * l.logits_s +
                     d(plan.mtp_depth) * (gemm_time(s_.chip, projection, block_dtypes).lower_bound_s() +
                                       gemm_backward_s(s_.chip, projection, block_dtypes));
    }
    const StackStepOverheads overheads = stack_step_overheads(s_);
    l.step_overhead_s = overheads.step_overhead_s;
    l.straggler_fraction = overheads.straggler_fraction;
    if (s_.chip.vector_unit) {
        const double sms = d(s_.chip.vector_unit->units);
        l.expert_comm_sm_share = std::min(1.0, s_.stack.expert_comm_sms / sms);
        // A GEMM left (1 - share) of the SMs takes 1 / (1 - share) of its time.
        const auto margin = [&](double comm_sms) {
            const double share = std::min(0.5, comm_sms / sms);
            return share / (1.0 - share);
        };
        l.sharded_comm_sm_margin = margin(s_.stack.sharded_comm_sms);
        l.tp_overlap_sm_s = mix([](const LayerTime& t) { return t.tp_overlapped_fwd; }) * margin(s_.stack.tp_comm_sms_forward) +
                            mix([](const LayerTime& t) { return t.tp_overlapped_bwd; }) * margin(s_.stack.tp_comm_sms_backward);
    }

    // Pipeline: a micro-batch's activations cross each stage boundary forward and back.
    if (pp > 1) {
        const double activation_bytes = dense_work.local_tokens * d(model.d_model) * 2.0;
        // Activations every tensor rank holds whole (no sequence parallelism) are sent a 1/tp slice
        // per rank and all-gathered over the tensor ranks after, where the stack does so.
        const bool whole_on_tensor_ranks = dense_work.local_tokens >= plan.micro_batch_seqs * s_.seq_len / cp;
        const double split = s_.stack.pipeline_scatter_gather && whole_on_tensor_ranks ? tp : 1.0;
        DerivedCollective send{"pipeline send", CollectiveKind::permute, {axis_name(PlanAxis::pipeline)}, activation_bytes / split,
                               CommPhase::forward, CommRole::activations};
        const CollectiveCost& cc = cost(send);
        l.pipeline_send_s = 2.0 * cc.time_s();
        l.interleaved_send_overlap = s_.stack.interleaved_send_overlap;
        out.send_level = cc.bottleneck;
        if (split > 1) {
            const DerivedCollective gather{"pipeline gather", CollectiveKind::all_gather, {axis_name(PlanAxis::tensor)}, activation_bytes,
                                           CommPhase::forward, CommRole::activations};
            l.pipeline_send_s += 2.0 * cost(gather).time_s();
        }
    }

    // Memory per chip.
    l.layer_weight_elements = (1.0 - moe_fraction) * dense_work.weight_elements + moe_fraction * moe_work.weight_elements;
    l.fsdp_size = axis(PlanAxis::fsdp);
    // The output head's weights, and the input embedding beside them on a one-stage pipeline where untied.
    const double embedding_weights = output.logits.weight_elements / l.fsdp_size * (model.tied_embeddings || pp > 1 ? 1.0 : 2.0);
    l.local_params = l.layers_per_stage * l.layer_weight_elements + embedding_weights + d(plan.mtp_depth) * mtp.weight_elements;
    for (const auto& a : s_.strategy.optimizer_shard_axes)
        if (a != axis_name(PlanAxis::fsdp)) l.optimizer_shard_size *= axis(a);
    // Activations: what each tensor of the op list holds on this device, bf16.
    for (std::size_t bit = 0; bit < kSavedTensorCount; ++bit)
        l.saved_bytes_per_layer[bit] = 2.0 * ((1.0 - moe_fraction) * dense_work.saved_elements[bit] + moe_fraction * moe_work.saved_elements[bit]);
    l.latent_attention = model.mla.has_value();
    l.logits_buffer_bytes = output.logits_bytes();
    // Gathered weights: two layers in flight (one in use, the next prefetched), or every layer of
    // the stage when they are kept from the forward pass to the backward.
    if (l.fsdp_size > 1) {
        const double layers_held = plan.reshards_after_forward() ? 2.0 : std::max(2.0, l.layers_per_stage);
        l.gathered_weight_bytes = layers_held * l.layer_weight_elements * l.fsdp_size * l.precision.param_bytes;
    }
    l.hbm_bytes = s_.chip.hbm_bytes;
    l.hbm_Bps = hbm_Bps();
    l.host_link_Bps = s_.chip.host_link_Bps;
    l.tokens_per_step = s_.global_batch_seqs * s_.seq_len;
    l.chips = d(s_.cluster.chips());
    l.peak_flops = peak(plan.precision);
    l.model_flops_per_token = flops_per_token(model, s_.seq_len, true).training();
    return out;
}

}  // namespace

StepKnobs TrainingPlan::step_knobs() const {
    StepKnobs k;
    k.microbatches = microbatches;
    k.schedule = schedule;
    k.virtual_stages = d(vpp);
    k.recompute = recompute.modules;
    k.offload_activations = recompute.offload;
    k.zero_stage = zero_stage();
    k.offload_optimizer = offload_optimizer;
    k.overlap_data_parallel = overlap;
    k.overlap_tensor_parallel = tp_overlap;
    k.overlap_expert_parallel = ep_overlap;
    return k;
}

void check_training_plan(const ModelSpec& m, const TrainingPlan& plan) {
    const auto axis = [&](const auto& name) { return plan.size(name); };
    // The model's rules on the degrees (a plan made by make_training_plan keeps them; one built by hand may not).
    Degrees degrees;
    degrees.tp = static_cast<std::int64_t>(axis(PlanAxis::tensor));
    degrees.pp = static_cast<std::int64_t>(axis(PlanAxis::pipeline));
    degrees.ep = static_cast<std::int64_t>(axis(PlanAxis::expert));
    for (const std::string& folded : plan.expert_folded_axes) degrees.ep *= static_cast<std::int64_t>(axis(folded));
    if (const auto fault = model_fault(m, degrees, {})) throw InputError("plan", fault->field, fault->message);
    const double pp = axis(PlanAxis::pipeline);
    if (!plan.stage_layers.empty()) {
        std::int64_t total = 0;
        for (auto layers : plan.stage_layers) total += layers;
        if (d(static_cast<std::int64_t>(plan.stage_layers.size())) != pp)
            throw InputError("plan", "stage_layers", std::to_string(plan.stage_layers.size()) + " stages given for " +
                                                         std::to_string(static_cast<long long>(pp)) + " pipeline ranks");
        if (total != m.n_layers)
            throw InputError("plan", "stage_layers", "the stages hold " + std::to_string(total) + " layers, not the model's " +
                                                         std::to_string(m.n_layers));
        // Interleaving gives each rank vpp chunks: every chunk needs a layer.
        if (d(*std::min_element(plan.stage_layers.begin(), plan.stage_layers.end())) < d(plan.vpp))
            throw InputError("plan", "stage_layers", "a stage holds fewer layers than its " +
                                                         std::to_string(static_cast<long long>(plan.vpp)) + " virtual stages");
    } else if (std::fmod(d(m.n_layers), pp * d(plan.vpp)) != 0.0)
        throw InputError("plan", axis_name(PlanAxis::pipeline), std::to_string(m.n_layers) + " layers do not split into " +
                                                         std::to_string(static_cast<long long>(pp * d(plan.vpp))) +
                                                         " pipeline stages (give an uneven split: --stage-layers or stage_layers)");
    if (plan.microbatches < 1 || plan.micro_batch_seqs < 1)
        throw InputError("plan", "micro_batch", "the global batch does not split into whole micro-batches");
}

LayoutWork derive_layout_work(const TrainingScenario& s) {
    MicroBatch workload;
    workload.micro_batch_seqs = s.plan.micro_batch_seqs;
    workload.seq_len = s.seq_len;
    workload.reshard_after_forward = s.plan.reshards_after_forward();
    workload.expert_imbalance = s.plan.expert_imbalance;
    if (s.plan.fp8_dispatch) workload.dispatch_bytes = kFp8DispatchBytes;
    // fp16 runs keep fp16 gradients (their loss scaling guards the range); bf16 ones may reduce in fp32.
    if (s.stack.fp32_gradient_reduction && s.plan.precision != Dtype::fp16) workload.grad_bytes = bytes_per_element(Dtype::fp32);
    LayoutWork work;
    work.dense = derive_layer_work(s.model, s.strategy, s.plan.axes, workload, false);
    work.moe = s.model.moe ? derive_layer_work(s.model, s.strategy, s.plan.axes, workload, true) : work.dense;
    work.output = derive_output_work(s.model, s.strategy, s.plan.axes, workload.micro_batch_seqs * workload.seq_len / s.plan.size(PlanAxis::context));
    work.mtp_projection = derive_mtp_projection(s.model, s.strategy, s.plan.axes, work.dense.local_tokens);
    return work;
}

LayoutCostsReport cost_layout(const TrainingScenario& scenario, const LayoutWork& work, CollectiveMemo* memo) {
    return LayoutCoster(scenario, memo).run(work);
}


StackStepOverheads stack_step_overheads(const TrainingJob& job) {
    if (!job.chip.kernels) return {};
    // A deterministic chip's ranks keep one pace within a domain (one statically scheduled program
    // over its own links); domains joined over the data-centre network, each fed by its own hosts,
    // still wait for the slowest of them.
    const std::int64_t ranks = job.chip.deterministic_step_time ? job.cluster.chips() / job.cluster.chips_per_domain() : job.cluster.chips();
    return {job.stack.fitted.per_step_overhead_s, straggler_fraction(static_cast<double>(ranks), job.stack.fitted.rank_time_cv)};
}

TrainingReport simulate_training(const TrainingScenario& scenario) {
    check_training_plan(scenario.model, scenario.plan);
    if (scenario.mesh.size() != scenario.cluster.chips())
        throw InputError("plan", "axes", "the plan's axes do not multiply to the chip count");
    const LayoutWork work = derive_layout_work(scenario);
    const LayoutCostsReport layout = cost_layout(scenario, work, nullptr);
    const LayoutCosts& l = layout.costs;
    const StepKnobs knobs = scenario.plan.step_knobs();
    StepParts parts{};
    TrainingReport report;
    report.step_time_s = estimate_step_time(l, knobs, parts);
    report.memory = estimate_memory(l, knobs);
    // Inputs are range-checked where they are read; a non-finite answer is still never printed.
    if (!std::isfinite(report.step_time_s) || report.step_time_s <= 0 || !std::isfinite(report.memory.total_bytes()))
        throw InputError(scenario.chip.name, "", "the chip, model and plan give no finite step time or memory; check their numbers");
    report.hbm_bytes = l.hbm_bytes;
    report.fits = report.memory.total_bytes() <= l.hbm_bytes;
    report.collectives = (scenario.model.moe ? work.moe : work.dense).collectives;

    const auto part = [&](StepPart p) { return parts[static_cast<std::size_t>(p)]; };
    const auto network = [](const std::string& level) { return Limit{Bound::network, level}; };
    report.components = {
        {"matmuls (incl. output layer)", part(StepPart::matmuls), {layout.matmul_bound, ""}},
        {"attention", part(StepPart::attention), {Bound::compute, ""}},
        {"elementwise (norms, activations)", part(StepPart::elementwise), {Bound::memory, ""}},
        {"kernel launches", part(StepPart::launches), {Bound::latency, ""}},
        {"recomputation", part(StepPart::recompute), {Bound::compute, ""}},
        {"tensor-parallel comms (exposed)", part(StepPart::tensor_comm), network(layout.tensor_level)},
        {"context-parallel comms (exposed)", part(StepPart::context_comm), network(layout.context_level)},
        {"expert all-to-all (exposed)", part(StepPart::expert_comm), network(layout.expert_level)},
        {"weight gathers (exposed)", part(StepPart::weight_gathers), network(layout.weights_level)},
        {"activation offload (exposed)", part(StepPart::activation_offload), {Bound::host_link, ""}},
        {"pipeline bubble", part(StepPart::bubble), {Bound::pipeline, ""}},
        {"pipeline sends", part(StepPart::pipeline_sends), network(layout.send_level)},
        {"gradient sync (exposed)", part(StepPart::gradient_sync), network(layout.step_level)},
        {"optimizer step", part(StepPart::optimizer), {knobs.offload_optimizer ? Bound::host_link : Bound::memory, ""}},
        {"framework overhead (stack)", part(StepPart::framework), {Bound::latency, ""}},
        {"waiting for the slowest rank", part(StepPart::stragglers), {Bound::latency, ""}},
    };
    double largest = -1;
    for (const auto& c : report.components)
        if (c.time_s > largest) {
            largest = c.time_s;
            report.bound = c.bound;
        }
    const double per_layer_microbatches = knobs.microbatches * pipeline_pace(l, knobs).layers;
    report.per_layer = {forward_compute_s(l), backward_compute_s(l),
                        part(StepPart::recompute) / per_layer_microbatches,
                        (part(StepPart::tensor_comm) + part(StepPart::context_comm) + part(StepPart::expert_comm) +
                         part(StepPart::weight_gathers)) / per_layer_microbatches};
    report.tokens_per_step = l.tokens_per_step;
    report.tokens_per_s = l.tokens_per_step / report.step_time_s;
    report.model_flops_per_token = l.model_flops_per_token;
    report.mfu = report.tokens_per_s * l.model_flops_per_token / (l.chips * l.peak_flops);
    const double hardware_flops_per_token = training_flops_with_recompute(scenario.model, scenario.seq_len, true, knobs.recompute);
    report.hfu = report.tokens_per_s * hardware_flops_per_token / (l.chips * l.peak_flops);
    return report;
}

}  // namespace ridgeline
