#pragma once
// What a search keeps while plans stream by: the K shortest steps (equal steps: the smaller
// memory first) and the Pareto front of step time vs memory per chip. Remaining ties go to the
// earlier plan in the enumeration, so that merging the threads' partial results gives the same
// answer for any thread count. The top K holds distinct plans: one that differs from an entry
// only in the order of its axes on the topology and costs the same within 0.1% joins that entry
// (the better of the two kept, the other counted).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "search/train_search.hpp"

namespace ridgeline {

class TopPlans {
public:
    explicit TopPlans(std::size_t capacity) : capacity_(capacity) { plans_.reserve(capacity + 1); }
    [[nodiscard]] bool admits(double step_s, double memory_bytes, std::uint64_t ordinal) const {
        return plans_.size() < capacity_ || ranks_before(step_s, memory_bytes, ordinal, plans_.back());
    }
    void insert(const SearchedPlan& plan);  // only what admits() let in
    [[nodiscard]] const std::vector<SearchedPlan>& plans() const { return plans_; }

private:
    void insert_ranked(const SearchedPlan& plan);
    static bool ranks_before(double step_s, double memory_bytes, std::uint64_t ordinal, const SearchedPlan& other) {
        if (step_s != other.step_time_s) return step_s < other.step_time_s;
        if (memory_bytes != other.memory_bytes) return memory_bytes < other.memory_bytes;
        return ordinal < other.ordinal;
    }
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
