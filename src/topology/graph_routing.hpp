#pragma once
// What collective costs need from a custom graph level, derived from its links by routing every
// message over shortest paths: the busiest link's load under a bidirectional ring over the
// members in index order and under all-to-all, and the diameter. All-pairs routing is the
// expensive part of a graph file, so it runs the first time a collective crosses the level
// (a command that never does, or a file refused for another field, pays nothing), once per
// process however often the level is copied.
#include <cstdint>
#include <mutex>

#include "topology/cluster.hpp"

namespace ridgeline {

struct GraphLoads {
    double ring_link_load = 1;
    double all_to_all_link_load = 1;
    std::int64_t diameter = 1;
};

class GraphRouting {
public:
    explicit GraphRouting(PhysicalDim level);  // a graph level (its own `routing` is ignored)
    [[nodiscard]] const GraphLoads& loads() const;  // thread-safe

private:
    PhysicalDim level_;
    mutable std::once_flag once_;
    mutable GraphLoads loads_;
};

}  // namespace ridgeline
