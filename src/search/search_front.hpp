#pragma once
// What the training search keeps while plans stream by (core/streaming.hpp): the K shortest
// steps (equal steps: the smaller memory first) and the Pareto front of step time vs memory per
// chip. The top K holds distinct plans: one that differs from an entry only in the order of its
// axes on the topology and costs the same within 0.1% joins that entry (the better of the two
// kept, the other counted).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/streaming.hpp"
#include "search/train_search.hpp"

namespace ridgeline {

class TopPlans {
public:
    explicit TopPlans(std::size_t capacity) : top_(capacity) {}
    [[nodiscard]] bool admits(double step_s, double memory_bytes, std::uint64_t ordinal) const {
        return top_.admits({step_s, memory_bytes, 0, ordinal});
    }
    void insert(const SearchedPlan& plan);  // only what admits() let in
    [[nodiscard]] const std::vector<SearchedPlan>& plans() const { return top_.items(); }

private:
    TopK<SearchedPlan> top_;
};

using PlanFront = ParetoFront<SearchedPlan>;  // memory per chip (x) vs step time (y)

}  // namespace ridgeline
