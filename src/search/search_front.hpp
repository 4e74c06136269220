#pragma once
// What a search keeps while plans stream by: the K shortest steps and the Pareto front of step
// time vs memory per chip. Ties go to the earlier plan in the enumeration, so that merging the
// threads' partial results gives the same answer for any thread count.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "search/train_search.hpp"

namespace ridgeline {

class TopPlans {
public:
    explicit TopPlans(std::size_t capacity) : capacity_(capacity) { plans_.reserve(capacity + 1); }
    [[nodiscard]] bool admits(double step_s, std::uint64_t ordinal) const {
        if (plans_.size() < capacity_) return true;
        const SearchedPlan& worst = plans_.back();
        return step_s < worst.step_time_s || (step_s == worst.step_time_s && ordinal < worst.ordinal);
    }
    void insert(const SearchedPlan& plan);  // only what admits() let in
    [[nodiscard]] const std::vector<SearchedPlan>& plans() const { return plans_; }

private:
    std::size_t capacity_;
    std::vector<SearchedPlan> plans_;  // best first
};

class ParetoFront {
public:
    [[nodiscard]] bool admits(double step_s, double memory_bytes, std::uint64_t ordinal) const;
    void insert(const SearchedPlan& plan);  // only what admits() let in
    [[nodiscard]] const std::vector<SearchedPlan>& plans() const { return plans_; }

private:
    std::vector<SearchedPlan> plans_;  // memory ascending, step time descending
};

}  // namespace ridgeline
