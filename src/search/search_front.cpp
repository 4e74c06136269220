#include "search/search_front.hpp"

#include <algorithm>
#include <cmath>

namespace ridgeline {

namespace {

constexpr double kSameCost = 1e-3;  // relative step time under which two axis orders are one plan

bool same_but_order(const SearchedPlan& a, const SearchedPlan& b) {
    return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.ep == b.ep && a.fsdp == b.fsdp &&
           a.etp == b.etp && a.vpp == b.vpp && a.sequence_parallel == b.sequence_parallel &&
           a.uneven_pipeline == b.uneven_pipeline && a.zero == b.zero && a.micro_batch_seqs == b.micro_batch_seqs &&
           a.schedule == b.schedule && a.recompute == b.recompute && a.offload_optimizer == b.offload_optimizer &&
           a.overlap == b.overlap && a.tp_overlap == b.tp_overlap && a.memory_bytes == b.memory_bytes &&
           std::abs(a.step_time_s - b.step_time_s) <= kSameCost * std::min(a.step_time_s, b.step_time_s);
}

}  // namespace

void TopPlans::insert_ranked(const SearchedPlan& plan) {
    const auto at = std::find_if(plans_.begin(), plans_.end(), [&](const SearchedPlan& p) {
        return ranks_before(plan.step_time_s, plan.memory_bytes, plan.ordinal, p);
    });
    plans_.insert(at, plan);
    if (plans_.size() > capacity_) plans_.pop_back();
}

void TopPlans::insert(const SearchedPlan& plan) {
    const auto same = std::find_if(plans_.begin(), plans_.end(), [&](const SearchedPlan& p) { return same_but_order(p, plan); });
    if (same == plans_.end()) return insert_ranked(plan);
    const std::uint32_t orders = same->other_orders + plan.other_orders + 1;
    if (!ranks_before(plan.step_time_s, plan.memory_bytes, plan.ordinal, *same)) {
        same->other_orders = orders;
        return;
    }
    plans_.erase(same);
    SearchedPlan kept = plan;
    kept.other_orders = orders;
    insert_ranked(kept);
}

bool ParetoFront::admits(double step_s, double memory_bytes, std::uint64_t ordinal) const {
    // The plan using at most this memory with the shortest step is the last one at or below it.
    const auto above = std::upper_bound(plans_.begin(), plans_.end(), memory_bytes,
                                        [](double m, const SearchedPlan& p) { return m < p.memory_bytes; });
    if (above == plans_.begin()) return true;
    const SearchedPlan& q = *(above - 1);
    if (q.step_time_s < step_s) return false;
    if (q.step_time_s > step_s) return true;
    return q.memory_bytes == memory_bytes && ordinal < q.ordinal;
}

void ParetoFront::insert(const SearchedPlan& plan) {
    // Drop what the new plan dominates: at least its memory and at least its step time.
    auto first = std::lower_bound(plans_.begin(), plans_.end(), plan.memory_bytes,
                                  [](const SearchedPlan& p, double m) { return p.memory_bytes < m; });
    auto last = first;
    while (last != plans_.end() && last->step_time_s >= plan.step_time_s) ++last;
    first = plans_.erase(first, last);
    plans_.insert(first, plan);
}

}  // namespace ridgeline
