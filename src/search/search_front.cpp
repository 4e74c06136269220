#include "search/search_front.hpp"

#include <algorithm>
#include <cmath>

namespace ridgeline {

namespace {

constexpr double kSameCost = 1e-3;  // relative step time under which two axis orders are one plan

bool same_but_order(const SearchedPlan& a, const SearchedPlan& b) {
    return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.ep == b.ep && a.fsdp == b.fsdp &&
           a.etp == b.etp && a.vpp == b.vpp && a.sequence_parallel == b.sequence_parallel &&
           a.stage_layers == b.stage_layers && a.zero == b.zero && a.micro_batch_seqs == b.micro_batch_seqs &&
           a.schedule == b.schedule && a.recompute == b.recompute && a.offload_optimizer == b.offload_optimizer &&
           a.overlap == b.overlap && a.tp_overlap == b.tp_overlap && a.memory_bytes == b.memory_bytes &&
           std::abs(a.step_time_s - b.step_time_s) <= kSameCost * std::min(a.step_time_s, b.step_time_s);
}

}  // namespace

void TopPlans::insert(const SearchedPlan& plan) {
    std::vector<SearchedPlan>& plans = top_.items();
    const auto same = std::find_if(plans.begin(), plans.end(), [&](const SearchedPlan& p) { return same_but_order(p, plan); });
    if (same == plans.end()) return top_.insert(plan);
    const std::uint32_t orders = same->other_orders + plan.other_orders + 1;
    if (!(plan.rank() < same->rank())) {
        same->other_orders = orders;
        return;
    }
    plans.erase(same);
    SearchedPlan kept = plan;
    kept.other_orders = orders;
    top_.insert(kept);
}

}  // namespace ridgeline
