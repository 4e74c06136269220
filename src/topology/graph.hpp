#pragma once
// The physical topology of a cluster as a Boost.Graph graph: chips and switches as vertices,
// each link as a pair of directed edges carrying its one-way bandwidth and latency. Answers what
// closed forms cannot for arbitrary shapes: hop counts, bisection bandwidth (max-flow) and the
// load each link carries under a ring or all-to-all schedule. The Boost types stay in graph.cpp.
#include <cstdint>
#include <memory>
#include <vector>

#include "topology/cluster.hpp"

namespace ridgeline {

struct HopStats {
    std::int64_t diameter = 0;  // largest hop count between two chips
    double mean_hops = 0;       // over ordered pairs of distinct chips
};

struct AllPairsRouting {
    double max_link_load = 0;
    HopStats hops;
};

class TopologyGraph {
public:
    explicit TopologyGraph(const Cluster& cluster);
    ~TopologyGraph();
    TopologyGraph(TopologyGraph&&) noexcept;
    TopologyGraph& operator=(TopologyGraph&&) noexcept;

    [[nodiscard]] std::int64_t chips() const;
    [[nodiscard]] std::int64_t switches() const;
    [[nodiscard]] std::int64_t links() const;  // physical (bidirectional) links
    [[nodiscard]] bool connected() const;

    // Chip index from coordinates, innermost dimension first (the first dimension varies fastest).
    [[nodiscard]] std::int64_t chip_index(const std::vector<std::int64_t>& coordinates) const;

    // Exact over all chips when there are at most `exact_limit` of them; otherwise from chip 0
    // (exact for the vertex-transitive built-in shapes).
    [[nodiscard]] HopStats hop_stats(std::int64_t exact_limit = 512) const;

    // Max-flow, one way, between the two halves of the chips split across dimension `dim`
    // (coordinates below / above half its extent).
    [[nodiscard]] double bisection_bandwidth_Bps(int dim) const;
    // Max-flow from all other chips into one chip (incast).
    [[nodiscard]] double max_flow_into_Bps(std::int64_t chip) const;
    // Sum of the bandwidth of every chip's outgoing links.
    [[nodiscard]] double injection_bandwidth_Bps() const;

    // Messages crossing the busiest directed link when each chip sends one message to the next
    // and one to the previous chip of `ring` (a bidirectional ring schedule), over shortest paths
    // split evenly where several exist.
    [[nodiscard]] double ring_max_link_load(const std::vector<std::int64_t>& ring) const;
    // Every chip sends one message to every other, over shortest paths split evenly: the messages
    // crossing the busiest directed link, and the exact hop statistics of the same routes. One
    // search from every chip, spread over the host's cores.
    [[nodiscard]] AllPairsRouting all_pairs_routing() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Closed forms for the built-in shapes, used as fast paths and checked against the graph.
namespace closed_form {
[[nodiscard]] std::int64_t torus_diameter(const Cluster& cluster);
// Bisection across dimension `dim` of a torus (level 0 ring dimensions only).
[[nodiscard]] double torus_bisection_Bps(const Cluster& cluster, int dim);
// Bisection of a switched domain joined by a fat tree, across the fabric dimension.
[[nodiscard]] double fat_tree_bisection_Bps(const Cluster& cluster);
// Busiest-link load of a bidirectional ring along one whole ring dimension.
[[nodiscard]] double ring_max_link_load(const PhysicalDim& dim);
// Busiest-link load of all-to-all over a torus (pair messages per directed link).
[[nodiscard]] double torus_all_to_all_max_link_load(const Cluster& cluster);
}  // namespace closed_form

}  // namespace ridgeline
