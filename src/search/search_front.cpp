#include "search/search_front.hpp"

#include <algorithm>

namespace ridgeline {

void TopPlans::insert(const SearchedPlan& plan) {
    const auto at = std::find_if(plans_.begin(), plans_.end(), [&](const SearchedPlan& p) {
        return ranks_before(plan.step_time_s, plan.memory_bytes, plan.ordinal, p);
    });
    plans_.insert(at, plan);
    if (plans_.size() > capacity_) plans_.pop_back();
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
