#include "spec/plan_check.hpp"

#include <algorithm>
#include <cmath>

namespace ridgeline {

namespace {

std::string text(std::int64_t value) { return std::to_string(value); }
std::string text(double value) { return std::to_string(static_cast<std::int64_t>(value)); }
double d(std::int64_t value) { return static_cast<double>(value); }

}  // namespace

std::optional<Rejection> model_rejection(const ModelSpec& m, const Degrees& g, const PlanWorkload& w) {
    if (m.n_heads % g.tp != 0) return Rejection::tensor_heads;
    if (!m.kv_heads_fit_tensor(g.tp)) return Rejection::tensor_kv_heads;
    if (g.ep > 1 && (!m.moe || m.moe->n_experts % g.ep != 0)) return Rejection::expert_count;
    if (g.pp > m.n_layers) return Rejection::pipeline_layers;
    if (w.seq_len > 0 && std::fmod(w.seq_len, d(g.cp)) != 0.0) return Rejection::context_seq;
    if (w.batch_seqs > 0 && std::fmod(w.batch_seqs, d(g.dp)) != 0.0) return Rejection::batch_data;
    return std::nullopt;
}

PlanFault explain(Rejection why, const ModelSpec& m, const Degrees& g, const PlanWorkload& w) {
    switch (why) {
        case Rejection::tensor_heads:
            return {"tp", "tensor parallelism " + text(g.tp) + " does not divide the " + text(m.n_heads) + " query heads of " + m.name};
        case Rejection::tensor_kv_heads:
            return {"tp", "tensor parallelism " + text(g.tp) + " neither divides nor is a multiple of the " + text(m.n_kv_heads) +
                              " KV heads of " + m.name};
        case Rejection::expert_count:
            if (!m.moe) return {"ep", "expert parallelism on a dense model (" + m.name + " has no experts)"};
            return {"ep", "expert parallelism " + text(g.ep) + " does not divide the " + text(m.moe->n_experts) + " experts of " + m.name};
        case Rejection::pipeline_layers:
            return {"pp", text(g.pp) + " pipeline stages for the " + text(m.n_layers) + " layers of " + m.name};
        case Rejection::context_seq:
            return {"cp", "context parallelism " + text(g.cp) + " does not divide the sequence of " + text(w.seq_len) + " tokens"};
        case Rejection::batch_data:
            return {w.batch_field, "a batch of " + text(w.batch_seqs) + " sequences does not split over " + text(g.dp) + " data-parallel replicas"};
        default: break;
    }
    return {"plan", "not a rule of the model"};  // the search's own verdicts have no field here
}

std::optional<PlanFault> placement_fault(const std::vector<std::string>& axes) {
    for (const std::string& axis : axes) {
        if (std::find(kPlanAxisNames.begin(), kPlanAxisNames.end(), axis) == kPlanAxisNames.end())
            return PlanFault{"placement." + axis, "not a plan axis (data, fsdp, expert, tensor, context, pipeline)"};
        if (std::count(axes.begin(), axes.end(), axis) > 1) return PlanFault{"placement." + axis, "axis named twice"};
    }
    return std::nullopt;
}

std::optional<double> batch_sequences(double batch_tokens, double seq_len) {
    const double sequences = batch_tokens / seq_len;
    if (!std::isfinite(sequences) || sequences < 1 || sequences != std::floor(sequences)) return std::nullopt;
    return sequences;
}

std::int64_t data_parallel_degree(const Degrees& g, std::int64_t chips) {
    if (g.dp != 0) return g.dp;
    // Each factor checked before it is multiplied: products of huge degrees would wrap around.
    std::int64_t model_parallel = 1;
    for (const std::int64_t degree : {g.tp, g.pp, g.cp}) {
        if (degree < 1 || degree > chips || model_parallel * degree > chips) return 0;
        model_parallel *= degree;
    }
    return chips % model_parallel == 0 ? chips / model_parallel : 0;
}

std::optional<PlanFault> model_fault(const ModelSpec& m, const Degrees& g, const PlanWorkload& w) {
    if (const auto why = model_rejection(m, g, w)) return explain(*why, m, g, w);
    return std::nullopt;
}

std::optional<PlanFault> structure_fault(const Plan& p, std::int64_t chips) {
    for (const DegreeField& f : kDegreeFields)
        if (const std::int64_t degree = p.*f.value; (degree < 1 && f.value != &Degrees::dp) || degree < 0 || degree > chips)
            return PlanFault{f.key, std::string(f.key) + " " + text(degree) + " is not between 1 and the " + text(chips) + " chips"};
    // Each factor is at most the chips, so no product below wraps around.
    std::int64_t model_parallel = p.tp;
    for (const std::int64_t degree : {p.pp, p.cp}) {
        model_parallel *= degree;
        if (model_parallel > chips)
            return PlanFault{"tp", "tp x pp x cp = " + text(model_parallel) + " exceeds the " + text(chips) + " chips"};
    }
    if (p.dp == 0) return PlanFault{"tp", "tp x pp x cp = " + text(model_parallel) + " does not divide " + text(chips) + " chips"};
    if (p.dp * model_parallel != chips)
        return PlanFault{"dp", "dp x tp x pp x cp = " + text(p.dp * model_parallel) + " but there are " + text(chips) + " chips"};
    if (p.dp % p.fsdp != 0)
        return PlanFault{"fsdp", "fsdp " + text(p.fsdp) + " does not divide dp " + text(p.dp) + " (FSDP over the context ranks too is not modelled)"};
    if (p.vpp < 1) return PlanFault{"vpp", "virtual stages must be at least 1"};
    if (p.vpp > 1 && p.pp == 1) return PlanFault{"vpp", "virtual stages need pipeline parallelism (pp > 1)"};
    if (p.schedule == PipelineSchedule::dualpipe && p.pp % 2 != 0)
        return PlanFault{"schedule", "DualPipe pairs the pipeline's ranks from both ends: pp must be even, found " + text(p.pp)};
    if (p.sequence_parallel && p.tp == 1) return PlanFault{"sequence_parallel", "needs tensor parallelism (tp > 1)"};
    if (p.zero && (*p.zero < 0 || *p.zero > 3)) return PlanFault{"zero", "expected 0, 1, 2 or 3"};
    if (p.reshard_after_forward && p.fsdp == 1)
        return PlanFault{"reshard_after_forward", "needs weights sharded over fsdp to gather again, and fsdp is 1"};
    if (p.etp != 0 && p.etp != 1 && p.etp != p.tp)
        return PlanFault{"etp", "expert tensor parallelism must be 1 or equal to tp (" + text(p.tp) + ")"};
    if (!known_moe_dispatcher(p.moe_dispatcher))
        return PlanFault{"moe_dispatcher", "expected alltoall or deepep, found \"" + p.moe_dispatcher + "\""};
    // Quantising before the dispatch is what fp8 expert GEMMs do anyway; DeepEP alone sends fp8.
    if (p.fp8_dispatch && (p.ep < 2 || p.precision != Dtype::fp8 || p.moe_dispatcher != "deepep"))
        return PlanFault{"fp8_dispatch", "needs expert parallelism (ep > 1), fp8 GEMMs (precision fp8) and the deepep dispatcher"};
    // Beyond ep the busiest rank would hold more than every routed token.
    if (!(p.expert_imbalance >= 1.0) || p.expert_imbalance > d(p.ep))
        return PlanFault{"expert_imbalance", "expected 1 (balanced) to ep (" + text(p.ep) + ", every token on one rank), found " +
                                                 std::to_string(p.expert_imbalance)};
    return std::nullopt;
}

std::optional<PlanFault> plan_fault(const ModelSpec& m, const Plan& p, std::int64_t chips, const PlanWorkload& w) {
    if (auto fault = structure_fault(p, chips)) return fault;
    return model_fault(m, p, w);
}

}  // namespace ridgeline
