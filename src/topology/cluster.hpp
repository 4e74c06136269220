#pragma once
// A cluster as a stack of interconnect levels, innermost first, each made of physical dimensions:
// the axes of a TPU torus, an NVLink switch domain, a scale-out fabric (InfiniBand fat tree, DCN)
// or a torus of domains. Collective costs and mesh placement work on these dimensions; the
// Boost.Graph view (topology/graph.hpp) is built from the same description.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hardware/system.hpp"

namespace ridgeline {

class GraphRouting;

enum class DimKind {
    ring,    // one torus axis: neighbours joined by links, closed into a ring when it wraps
    switched,  // every member reaches every other through a switch at its full egress (NVLink domain)
    fabric,  // scale-out network: each chip has its own NIC share into a fat tree or DCN
    graph,   // a custom level-0 graph given link by link (the only level-0 dimension)
};

struct PhysicalDim {
    std::string name;           // "x", "y", "z", "nvlink", "ib", "dcn", ...
    DimKind kind = DimKind::ring;
    int level = 0;              // interconnect level, innermost 0
    std::int64_t extent = 1;    // members along this dimension
    bool wraps = false;         // ring only
    double bw_per_chip_Bps_one_way = 0;  // ring: per link and direction; switched/fabric: per chip egress
    double hop_latency_s = 0;
    double collective_fraction = 1.0;  // of the rate that collectives and sends reach (the chip's measured link share)
    [[nodiscard]] double collective_Bps() const { return bw_per_chip_Bps_one_way * collective_fraction; }
    // fabric only: members under one leaf group and the leaf's oversubscription above it
    std::int64_t members_per_leaf = 0;
    double oversubscription = 1.0;
    // graph only: the links (member indices), and the routing over them that collective costs
    // need (topology/graph_routing.hpp), derived the first time a collective crosses the level.
    std::vector<std::pair<std::int64_t, std::int64_t>> links;
    std::shared_ptr<const GraphRouting> routing;
};

[[nodiscard]] PhysicalDim make_ring_dim(std::string name, int level, std::int64_t extent, bool wraps,
                                        double link_bw_Bps_one_way, double hop_latency_s);
[[nodiscard]] PhysicalDim make_switched_dim(std::string name, std::int64_t extent, double bw_per_chip_Bps_one_way,
                                            double hop_latency_s);
[[nodiscard]] PhysicalDim make_fabric_dim(std::string name, int level, std::int64_t extent, double bw_per_chip_Bps_one_way,
                                          double latency_s, std::int64_t members_per_leaf, double oversubscription);

struct Cluster {
    std::string name;
    std::string chip_name;
    std::vector<PhysicalDim> dims;  // innermost first
    double collective_overhead_s = 0;  // fixed cost of launching any collective

    [[nodiscard]] std::int64_t chips() const;
    [[nodiscard]] int levels() const { return dims.empty() ? 0 : dims.back().level + 1; }
    [[nodiscard]] std::int64_t chips_per_domain() const;  // chips in level 0
    [[nodiscard]] int find_dim(const std::string& dim_name) const;  // -1 when absent
};

// How big a slice of a system to build: a torus shape for TPUs ("4x4x4"), a count of scale-out
// domains (DGX nodes, NVL72 racks, TPU slices), or a chip count to be shaped automatically.
struct ClusterShape {
    std::vector<std::int64_t> torus_dims;  // empty: derive from chips
    std::int64_t domains = 0;              // 0: derive
    std::int64_t chips = 0;                // 0: derive from the other two
    // Price links at their datasheet rate, as hand analyses do, rather than at the share of it
    // collectives were measured to reach (the chip's collective_fraction).
    bool datasheet_links = false;
};

// Throws InputError naming `--topology`, `--nodes` or `--chips` when the shape does not fit the system.
[[nodiscard]] Cluster build_cluster(const Hardware& hardware, const ClusterShape& shape);

// The most cube-like torus of `chips` chips that fits in `max_dims` (each axis at most the
// corresponding pod axis), preferring shapes whose axes wrap. Empty when none exists.
[[nodiscard]] std::vector<std::int64_t> auto_torus_shape(std::int64_t chips, const ScaleUpSpec& scale_up);

}  // namespace ridgeline
