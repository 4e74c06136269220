#include "inference/serve_search.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "engine/roofline.hpp"
#include "mesh/plan_axes.hpp"
#include "core/streaming.hpp"

namespace ridgeline {

namespace {

std::vector<std::int64_t> powers_of_two_dividing(std::int64_t limit, std::int64_t must_divide) {
    std::vector<std::int64_t> values;
    for (std::int64_t v = 1; v <= limit; v *= 2)
        if (must_divide % v == 0) values.push_back(v);
    return values;
}

// A candidate with its place in the ranking: the objective (cost, or throughput per chip), then
// throughput per chip and per user, then the order candidates came in.
struct Ranked {
    ServeCandidate candidate;
    Rank by;
    [[nodiscard]] Rank rank() const { return by; }
    // The front: throughput per chip against tokens/s per user, both maximised.
    [[nodiscard]] double x() const { return -candidate.output_tokens_per_s_per_chip; }
    [[nodiscard]] double y() const { return -candidate.tokens_per_s_per_user; }
};

class Collector {
public:
    Collector(ServeObjective objective, std::size_t top_k) : objective_(objective), best_(top_k) {}

    void offer(const ServeCandidate& c) {
        const double per_chip = c.output_tokens_per_s_per_chip, per_user = c.tokens_per_s_per_user;
        const Ranked ranked{c, objective_ == ServeObjective::cost && c.cost_per_million_output_tokens_usd
                                   ? Rank{*c.cost_per_million_output_tokens_usd, -per_chip, -per_user, offered_}
                                   : Rank{-per_chip, -per_user, 0, offered_}};
        ++offered_;
        if (c.meets_slo && best_.admits(ranked.rank())) best_.insert(ranked);
        if (front_.admits(ranked.x(), ranked.y(), ranked.rank())) front_.insert(ranked);
    }

    void finish(ServeSearchResult& result) const {
        for (const Ranked& r : best_.items()) result.best.push_back(r.candidate);
        for (const Ranked& r : front_.items()) result.pareto.push_back(r.candidate);
    }

private:
    ServeObjective objective_;
    std::uint64_t offered_ = 0;
    TopK<Ranked> best_;
    ParetoFront<Ranked> front_;
};

}  // namespace

const char* objective_name(ServeObjective objective) {
    return objective == ServeObjective::cost ? "cost" : "throughput";
}

ServeSearchResult search_serving(const ServeSearchSpace& space) {
    const ModelSpec& m = space.model;
    const ChipSpec& chip = space.hardware.chip;
    (void)attention_family(chip, space.stack.attention);  // refused once, by name, not plan by plan
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
        s.stack = space.stack;
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
                    s.mesh = place_serving_plan(s.cluster, s.plan);
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
                                ServeCandidate c{chips, s.plan, s.batch_seqs, r.prefill.time_s, r.tpot_s(),
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
