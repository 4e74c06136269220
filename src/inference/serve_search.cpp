#include "inference/serve_search.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "mesh/plan_axes.hpp"

namespace ridgeline {

namespace {

std::vector<std::int64_t> powers_of_two_dividing(std::int64_t limit, std::int64_t must_divide) {
    std::vector<std::int64_t> values;
    for (std::int64_t v = 1; v <= limit; v *= 2)
        if (must_divide % v == 0) values.push_back(v);
    return values;
}

bool better(const ServeCandidate& a, const ServeCandidate& b, ServeObjective objective) {
    if (objective == ServeObjective::cost && a.cost_per_million_output_tokens_usd && b.cost_per_million_output_tokens_usd &&
        *a.cost_per_million_output_tokens_usd != *b.cost_per_million_output_tokens_usd)
        return *a.cost_per_million_output_tokens_usd < *b.cost_per_million_output_tokens_usd;
    if (a.output_tokens_per_s_per_chip != b.output_tokens_per_s_per_chip)
        return a.output_tokens_per_s_per_chip > b.output_tokens_per_s_per_chip;
    return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
}

bool dominates(const ServeCandidate& a, const ServeCandidate& b) {
    return a.output_tokens_per_s_per_chip >= b.output_tokens_per_s_per_chip &&
           a.tokens_per_s_per_user >= b.tokens_per_s_per_user &&
           (a.output_tokens_per_s_per_chip > b.output_tokens_per_s_per_chip || a.tokens_per_s_per_user > b.tokens_per_s_per_user);
}

class Collector {
public:
    Collector(ServeObjective objective, std::size_t top_k) : objective_(objective), top_k_(top_k) {}

    void offer(const ServeCandidate& c) {
        if (c.meets_slo) {
            const auto at = std::lower_bound(best_.begin(), best_.end(), c,
                                             [&](const ServeCandidate& a, const ServeCandidate& b) { return better(a, b, objective_); });
            if (static_cast<std::size_t>(at - best_.begin()) < top_k_) {
                best_.insert(at, c);
                if (best_.size() > top_k_) best_.pop_back();
            }
        }
        for (const ServeCandidate& p : pareto_)
            if (dominates(p, c) || (p.output_tokens_per_s_per_chip == c.output_tokens_per_s_per_chip &&
                                    p.tokens_per_s_per_user == c.tokens_per_s_per_user))
                return;
        std::erase_if(pareto_, [&](const ServeCandidate& p) { return dominates(c, p); });
        pareto_.push_back(c);
    }

    void finish(ServeSearchResult& result) {
        std::sort(pareto_.begin(), pareto_.end(), [](const ServeCandidate& a, const ServeCandidate& b) {
            return a.output_tokens_per_s_per_chip > b.output_tokens_per_s_per_chip;
        });
        result.best = std::move(best_);
        result.pareto = std::move(pareto_);
    }

private:
    ServeObjective objective_;
    std::size_t top_k_;
    std::vector<ServeCandidate> best_, pareto_;
};

}  // namespace

const char* objective_name(ServeObjective objective) {
    return objective == ServeObjective::cost ? "cost" : "throughput";
}

ServeSearchResult search_serving(const ServeSearchSpace& space) {
    const ModelSpec& m = space.model;
    const ChipSpec& chip = space.hardware.chip;
    if (space.objective == ServeObjective::cost && !chip.price_usd_per_chip_hour)
        throw InputError(kRequest, "objective", chip.name + " has no hourly price in its hardware file; use objective throughput");
    if (space.chip_counts.empty()) throw InputError(kRequest, "chips", "no chip count to search");

    std::vector<Dtype> weight_dtypes = {Dtype::bf16, Dtype::int8, Dtype::int4};
    std::vector<Dtype> kv_dtypes = {Dtype::bf16, Dtype::int8};
    if (chip.supports(Dtype::fp8)) {
        weight_dtypes.push_back(Dtype::fp8);
        kv_dtypes.push_back(Dtype::fp8);
    }

    ServeSearchResult result;
    Collector collector(space.objective, space.top_k);
    for (const std::int64_t chips : space.chip_counts) {
        ClusterShape shape;
        shape.chips = chips;
        ServingScenario s;
        s.model = m;
        s.chip = chip;
        s.strategy = space.strategy;
        s.cluster = build_cluster(space.hardware, shape);
        s.input_len = space.input_len;
        s.output_len = space.output_len;
        const std::int64_t head_divisor = m.mla ? m.n_heads : std::gcd(m.n_heads, m.n_kv_heads);
        for (const std::int64_t tp : powers_of_two_dividing(chips, head_divisor)) {
            if (chips % tp != 0) continue;
            for (const std::int64_t pp : powers_of_two_dividing(chips / tp, m.n_layers)) {
                if (chips % (tp * pp) != 0) continue;
                const std::int64_t dp = chips / (tp * pp);
                const std::int64_t experts = m.moe ? m.moe->n_experts : 1;
                for (const std::int64_t ep : powers_of_two_dividing(dp, experts)) {
                    if (dp % ep != 0) continue;
                    s.plan.tp = tp;
                    s.plan.pp = pp;
                    s.plan.ep = ep;
                    s.plan.dp = dp;
                    s.mesh = place_mesh(s.cluster, {{axis_name(PlanAxis::data), dp / ep}, {axis_name(PlanAxis::expert), ep}, {axis_name(PlanAxis::tensor), tp}, {axis_name(PlanAxis::pipeline), pp}}, {});
                    for (const Dtype weights : weight_dtypes)
                        for (const Dtype kv : kv_dtypes) {
                            s.plan.weights = weights;
                            s.plan.kv_cache = kv;
                            for (std::int64_t b = 1; b <= space.max_batch_per_replica; b *= 2) {
                                s.batch_seqs = static_cast<double>(b * dp);
                                const ServingReport r = simulate_serving(s);
                                ++result.evaluated;
                                if (!r.fits) break;  // a larger batch needs more memory still
                                ++result.fitting;
                                ServeCandidate c{chips, s.plan, s.batch_seqs, r.prefill.time_s, r.decode.time_s,
                                                 r.output_tokens_per_s, r.output_tokens_per_s_per_chip, r.tokens_per_s_per_user,
                                                 r.cost_per_million_output_tokens_usd, r.memory.total_bytes(), r.decode.bound,
                                                 false};
                                c.meets_slo = c.ttft_s <= space.slo_ttft_s && c.tpot_s <= space.slo_tpot_s;
                                if (c.meets_slo) ++result.meeting_slo;
                                collector.offer(c);
                            }
                        }
                }
            }
        }
    }
    collector.finish(result);
    return result;
}

}  // namespace ridgeline
