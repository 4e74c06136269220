#include "topology/topology_summary.hpp"

#include <algorithm>

namespace ridgeline {

TopologySummary summarize_topology(const Cluster& cluster, std::int64_t graph_chip_limit,
                                   std::int64_t all_to_all_chip_limit) {
    TopologySummary summary;
    summary.cluster = cluster;
    const bool pure_torus = std::all_of(cluster.dims.begin(), cluster.dims.end(),
                                        [](const PhysicalDim& dim) { return dim.kind == DimKind::ring; });
    const bool switch_and_fabric = cluster.dims.size() == 2 && cluster.dims[0].kind == DimKind::switched &&
                                   cluster.dims[1].kind == DimKind::fabric;
    if (pure_torus) {
        summary.closed_form_diameter = closed_form::torus_diameter(cluster);
        summary.closed_form_all_to_all_link_load = closed_form::torus_all_to_all_max_link_load(cluster);
    }
    if (cluster.chips() > graph_chip_limit) return summary;

    const TopologyGraph graph(cluster);
    summary.graph_built = true;
    summary.switches = graph.switches();
    summary.links = graph.links();
    summary.connected = graph.connected();
    // All-pairs routing gives exact hop figures too; without it they come from chip 0 (exact for
    // the vertex-transitive built-in shapes).
    const bool route_all_pairs = cluster.chips() <= all_to_all_chip_limit;
    const std::optional<AllPairsRouting> all_pairs =
        route_all_pairs ? std::optional<AllPairsRouting>(graph.all_pairs_routing()) : std::nullopt;
    summary.hops = all_pairs ? all_pairs->hops : graph.hop_stats();
    for (std::size_t i = 0; i < cluster.dims.size(); ++i) {
        const PhysicalDim& dim = cluster.dims[i];
        if (dim.extent < 2 || dim.extent % 2 != 0 || dim.kind == DimKind::graph || dim.kind == DimKind::switched) continue;
        BisectionFigure figure{dim.name, graph.bisection_bandwidth_Bps(static_cast<int>(i)), std::nullopt};
        if (pure_torus) figure.closed_form_Bps = closed_form::torus_bisection_Bps(cluster, static_cast<int>(i));
        if (switch_and_fabric && dim.kind == DimKind::fabric) figure.closed_form_Bps = closed_form::fat_tree_bisection_Bps(cluster);
        summary.bisections.push_back(figure);
    }
    if (all_pairs) summary.all_to_all_link_load = all_pairs->max_link_load;
    return summary;
}

}  // namespace ridgeline
