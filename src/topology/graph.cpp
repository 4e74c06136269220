#include "topology/graph.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <limits>
#include <thread>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include "core/error.hpp"

namespace ridgeline {

namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
struct EdgeProps {
    double capacity = 0;  // one-way bandwidth, bytes/s
    double residual = 0;
    Traits::edge_descriptor reverse{};
    std::size_t id = 0;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeProps>;
using Vertex = Graph::vertex_descriptor;

double d(std::int64_t value) { return static_cast<double>(value); }

}  // namespace

struct TopologyGraph::Impl {
    Cluster cluster;
    Graph graph;
    std::int64_t chip_count = 0;
    std::int64_t switch_count = 0;
    std::size_t directed_edges = 0;
    std::vector<std::int64_t> strides;

    void link(Vertex a, Vertex b, double bandwidth) {
        boost::add_edge(a, b, EdgeProps{bandwidth, 0, {}, directed_edges++}, graph);
        boost::add_edge(b, a, EdgeProps{bandwidth, 0, {}, directed_edges++}, graph);
    }
    Vertex add_switch() {
        ++switch_count;
        return boost::add_vertex(graph);
    }
    [[nodiscard]] std::int64_t coordinate(std::int64_t chip, std::size_t dim) const {
        return (chip / strides[dim]) % cluster.dims[dim].extent;
    }

    explicit Impl(const Cluster& c) : cluster(c), graph(static_cast<std::size_t>(c.chips())) {
        chip_count = cluster.chips();
        std::int64_t stride = 1;
        for (const auto& dim : cluster.dims) {
            strides.push_back(stride);
            stride *= dim.extent;
        }
        for (std::size_t dim_index = 0; dim_index < cluster.dims.size(); ++dim_index) {
            const PhysicalDim& dim = cluster.dims[dim_index];
            const std::int64_t step = strides[dim_index];
            if (dim.kind == DimKind::graph) {
                for (std::int64_t chip = 0; chip < chip_count; ++chip) {
                    if (coordinate(chip, dim_index) != 0) continue;  // once per copy of the graph
                    for (const auto& [a, b] : dim.links)
                        link(static_cast<Vertex>(chip + a * step), static_cast<Vertex>(chip + b * step),
                             dim.bw_per_chip_Bps_one_way);
                }
                continue;
            }
            if (dim.kind == DimKind::ring) {
                for (std::int64_t chip = 0; chip < chip_count; ++chip) {
                    const std::int64_t x = coordinate(chip, dim_index);
                    const auto a = static_cast<Vertex>(chip);
                    if (x + 1 < dim.extent) link(a, static_cast<Vertex>(chip + step), dim.bw_per_chip_Bps_one_way);
                    const bool closes = dim.wraps && x + 1 == dim.extent;
                    if (closes) link(a, static_cast<Vertex>(chip - (dim.extent - 1) * step), dim.bw_per_chip_Bps_one_way);
                }
                continue;
            }
            // Switched and fabric dimensions: chips that differ only along this dimension meet at
            // switches — one per group for NVLink, leaf groups under a spine for a fat tree.
            std::vector<std::vector<std::int64_t>> groups;
            std::vector<std::int64_t> group_of(static_cast<std::size_t>(chip_count));
            std::vector<std::int64_t> key_to_group;
            for (std::int64_t chip = 0; chip < chip_count; ++chip) {
                const std::int64_t rest = chip - coordinate(chip, dim_index) * step;  // chip with this coordinate zeroed
                auto it = std::find(key_to_group.begin(), key_to_group.end(), rest);
                std::size_t g = static_cast<std::size_t>(it - key_to_group.begin());
                if (it == key_to_group.end()) {
                    key_to_group.push_back(rest);
                    groups.emplace_back();
                }
                groups[g].push_back(chip);
            }
            const std::int64_t per_leaf = dim.kind == DimKind::fabric && dim.members_per_leaf > 0
                                              ? std::min(dim.members_per_leaf, dim.extent) : dim.extent;
            // Fabric: chips with the same level-0 position across members form one rail; every
            // member's chips of a leaf group hang off that leaf.
            if (dim.kind == DimKind::switched) {
                for (const auto& group : groups) {
                    const Vertex hub = add_switch();
                    for (std::int64_t chip : group) link(static_cast<Vertex>(chip), hub, dim.bw_per_chip_Bps_one_way);
                }
                continue;
            }
            const std::int64_t leaves = (dim.extent + per_leaf - 1) / per_leaf;
            std::vector<Vertex> leaf_switches;
            for (std::int64_t leaf = 0; leaf < leaves; ++leaf) leaf_switches.push_back(add_switch());
            std::vector<double> leaf_down(static_cast<std::size_t>(leaves), 0.0);
            for (std::int64_t chip = 0; chip < chip_count; ++chip) {
                const auto leaf = static_cast<std::size_t>(coordinate(chip, dim_index) / per_leaf);
                link(static_cast<Vertex>(chip), leaf_switches[leaf], dim.bw_per_chip_Bps_one_way);
                leaf_down[leaf] += dim.bw_per_chip_Bps_one_way;
            }
            if (leaves > 1) {
                const Vertex spine = add_switch();
                for (std::size_t leaf = 0; leaf < leaf_switches.size(); ++leaf)
                    link(leaf_switches[leaf], spine, leaf_down[leaf] / dim.oversubscription);
            }
        }
    }

    // Shortest-path DAG from `source`: distances, path counts, and the DAG's edges (v, edge u->v)
    // in the order BFS finds them, so that read backwards every edge out of v comes before the
    // edges into v (one flat list: no allocation per vertex).
    struct Bfs {
        std::vector<std::int64_t> distance;
        std::vector<double> paths;
        std::vector<Vertex> order;
        std::vector<std::pair<Vertex, Graph::edge_descriptor>> dag;
    };
    // With `targets`, the search stops once the DAG into every target is complete (nothing beyond
    // their distance is expanded): a ring's neighbours are usually a few hops away.
    [[nodiscard]] Bfs bfs(Vertex source, const std::vector<Vertex>& targets = {}) const {
        const std::size_t n = boost::num_vertices(graph);
        Bfs result{std::vector<std::int64_t>(n, -1), std::vector<double>(n, 0.0), {}, {}};
        result.order.reserve(n);
        result.dag.reserve(directed_edges);
        result.order.push_back(source);
        result.distance[source] = 0;
        result.paths[source] = 1;
        for (std::size_t next = 0; next < result.order.size(); ++next) {
            const Vertex u = result.order[next];
            if (!targets.empty()) {
                bool found = true;
                std::int64_t farthest = 0;
                for (const Vertex t : targets) {
                    if (result.distance[t] < 0) found = false;
                    farthest = std::max(farthest, result.distance[t]);
                }
                if (found && result.distance[u] >= farthest) break;
            }
            for (auto [e, end] = boost::out_edges(u, graph); e != end; ++e) {
                const Vertex v = boost::target(*e, graph);
                if (result.distance[v] < 0) {
                    result.distance[v] = result.distance[u] + 1;
                    result.order.push_back(v);
                }
                if (result.distance[v] == result.distance[u] + 1) {
                    result.paths[v] += result.paths[u];
                    result.dag.emplace_back(v, *e);
                }
            }
        }
        return result;
    }

    // Sends `demand[v]` from `source` to each v, split over shortest paths in proportion to their count.
    void route(const Bfs& tree, const std::vector<double>& demand, std::vector<double>& load) const {
        std::vector<double> flow = demand;
        for (auto it = tree.dag.rbegin(); it != tree.dag.rend(); ++it) {
            const auto [v, e] = *it;
            if (flow[v] == 0 || tree.paths[v] == 0) continue;
            const Vertex u = boost::source(e, graph);
            const double share = flow[v] * tree.paths[u] / tree.paths[v];
            load[graph[e].id] += share;
            flow[u] += share;
        }
    }

    [[nodiscard]] double max_flow(const std::vector<std::int64_t>& sources, const std::vector<std::int64_t>& sinks) const {
        Graph flow_graph(boost::num_vertices(graph));
        const Vertex source = boost::add_vertex(flow_graph), sink = boost::add_vertex(flow_graph);
        const auto add = [&](Vertex a, Vertex b, double capacity) {
            auto forward = boost::add_edge(a, b, EdgeProps{capacity, 0, {}, 0}, flow_graph).first;
            auto backward = boost::add_edge(b, a, EdgeProps{0, 0, {}, 0}, flow_graph).first;
            flow_graph[forward].reverse = backward;
            flow_graph[backward].reverse = forward;
        };
        for (auto [e, end] = boost::edges(graph); e != end; ++e)
            add(boost::source(*e, graph), boost::target(*e, graph), graph[*e].capacity);
        double unlimited = 0;
        for (auto [e, end] = boost::edges(graph); e != end; ++e) unlimited += graph[*e].capacity;
        for (std::int64_t chip : sources) add(source, static_cast<Vertex>(chip), unlimited);
        for (std::int64_t chip : sinks) add(static_cast<Vertex>(chip), sink, unlimited);
        return boost::push_relabel_max_flow(flow_graph, source, sink,
                                            boost::capacity_map(boost::get(&EdgeProps::capacity, flow_graph))
                                                .residual_capacity_map(boost::get(&EdgeProps::residual, flow_graph))
                                                .reverse_edge_map(boost::get(&EdgeProps::reverse, flow_graph)));
    }
};

TopologyGraph::TopologyGraph(const Cluster& cluster) : impl_(std::make_unique<Impl>(cluster)) {}
TopologyGraph::~TopologyGraph() = default;
TopologyGraph::TopologyGraph(TopologyGraph&&) noexcept = default;
TopologyGraph& TopologyGraph::operator=(TopologyGraph&&) noexcept = default;

std::int64_t TopologyGraph::chips() const { return impl_->chip_count; }
std::int64_t TopologyGraph::switches() const { return impl_->switch_count; }
std::int64_t TopologyGraph::links() const { return static_cast<std::int64_t>(impl_->directed_edges / 2); }

bool TopologyGraph::connected() const {
    const auto tree = impl_->bfs(0);
    for (std::int64_t chip = 0; chip < impl_->chip_count; ++chip)
        if (tree.distance[static_cast<std::size_t>(chip)] < 0) return false;
    return true;
}

std::int64_t TopologyGraph::chip_index(const std::vector<std::int64_t>& coordinates) const {
    std::int64_t index = 0;
    for (std::size_t i = 0; i < coordinates.size() && i < impl_->strides.size(); ++i)
        index += coordinates[i] * impl_->strides[i];
    return index;
}

HopStats TopologyGraph::hop_stats(std::int64_t exact_limit) const {
    HopStats stats;
    const std::int64_t sources = impl_->chip_count <= exact_limit ? impl_->chip_count : 1;
    double total = 0, pairs = 0;
    for (std::int64_t source = 0; source < sources; ++source) {
        const auto tree = impl_->bfs(static_cast<Vertex>(source));
        for (std::int64_t chip = 0; chip < impl_->chip_count; ++chip) {
            if (chip == source) continue;
            const std::int64_t hops = tree.distance[static_cast<std::size_t>(chip)];
            stats.diameter = std::max(stats.diameter, hops);
            total += d(hops);
            pairs += 1;
        }
    }
    stats.mean_hops = pairs > 0 ? total / pairs : 0;
    return stats;
}

double TopologyGraph::bisection_bandwidth_Bps(int dim) const {
    if (dim < 0 || static_cast<std::size_t>(dim) >= impl_->cluster.dims.size())
        throw InputError("dimension", "", "no such dimension");
    std::vector<std::int64_t> low, high;
    const std::int64_t half = impl_->cluster.dims[static_cast<std::size_t>(dim)].extent / 2;
    for (std::int64_t chip = 0; chip < impl_->chip_count; ++chip)
        (impl_->coordinate(chip, static_cast<std::size_t>(dim)) < half ? low : high).push_back(chip);
    return impl_->max_flow(low, high);
}

double TopologyGraph::max_flow_into_Bps(std::int64_t chip) const {
    std::vector<std::int64_t> others;
    for (std::int64_t c = 0; c < impl_->chip_count; ++c)
        if (c != chip) others.push_back(c);
    return impl_->max_flow(others, {chip});
}

double TopologyGraph::injection_bandwidth_Bps() const {
    double total = 0;
    for (std::int64_t chip = 0; chip < impl_->chip_count; ++chip)
        for (auto [e, end] = boost::out_edges(static_cast<Vertex>(chip), impl_->graph); e != end; ++e)
            total += impl_->graph[*e].capacity;
    return total;
}

double TopologyGraph::ring_max_link_load(const std::vector<std::int64_t>& ring) const {
    std::vector<double> load(impl_->directed_edges, 0.0);
    const std::size_t n = boost::num_vertices(impl_->graph);
    for (std::size_t i = 0; i < ring.size(); ++i) {
        const auto from = static_cast<Vertex>(ring[i]);
        const std::int64_t next = ring[(i + 1) % ring.size()], previous = ring[(i + ring.size() - 1) % ring.size()];
        const auto tree = impl_->bfs(from, {static_cast<Vertex>(next), static_cast<Vertex>(previous)});
        for (const std::int64_t to : {next, previous}) {
            std::vector<double> demand(n, 0.0);
            demand[static_cast<std::size_t>(to)] = 1.0;
            impl_->route(tree, demand, load);
        }
    }
    return load.empty() ? 0.0 : *std::max_element(load.begin(), load.end());
}

AllPairsRouting TopologyGraph::all_pairs_routing() const {
    const std::size_t n = boost::num_vertices(impl_->graph);
    const std::int64_t chips = impl_->chip_count;
    // The sources fall into a fixed number of blocks, each routed into loads of its own and summed in
    // block order: the same sums on any number of cores. Workers take the blocks as they come.
    struct Partial {
        std::vector<double> load;
        std::int64_t diameter = 0;
        double total_hops = 0;
    };
    constexpr std::int64_t kBlocks = 16;
    const std::int64_t blocks = std::min(kBlocks, std::max<std::int64_t>(chips, 1));
    std::vector<Partial> partials(static_cast<std::size_t>(blocks));
    std::atomic<std::int64_t> next_block{0};
    const auto work = [&] {
        std::vector<double> demand(n, 0.0);
        for (std::int64_t block = next_block++; block < blocks; block = next_block++) {
            Partial& partial = partials[static_cast<std::size_t>(block)];
            partial.load.assign(impl_->directed_edges, 0.0);
            for (std::int64_t source = block * chips / blocks; source < (block + 1) * chips / blocks; ++source) {
                for (std::int64_t chip = 0; chip < chips; ++chip) demand[static_cast<std::size_t>(chip)] = chip != source ? 1.0 : 0.0;
                const auto tree = impl_->bfs(static_cast<Vertex>(source));
                impl_->route(tree, demand, partial.load);
                for (std::int64_t chip = 0; chip < chips; ++chip) {
                    const std::int64_t hops = tree.distance[static_cast<std::size_t>(chip)];
                    if (hops < 0) continue;  // unreachable: the summary reports the graph disconnected
                    partial.diameter = std::max(partial.diameter, hops);
                    partial.total_hops += d(hops);
                }
            }
        }
    };
    const auto workers = static_cast<std::int64_t>(std::clamp(std::thread::hardware_concurrency(), 1U, 16U));
    std::vector<std::thread> threads;
    for (std::int64_t t = 1; t < std::min(workers, blocks); ++t) threads.emplace_back(work);
    work();
    for (auto& thread : threads) thread.join();

    AllPairsRouting result;
    std::vector<double> load(impl_->directed_edges, 0.0);
    for (const Partial& partial : partials) {
        for (std::size_t e = 0; e < load.size(); ++e) load[e] += partial.load[e];
        result.hops.diameter = std::max(result.hops.diameter, partial.diameter);
        result.hops.mean_hops += partial.total_hops;
    }
    const double pairs = d(chips) * d(chips - 1);
    result.hops.mean_hops = pairs > 0 ? result.hops.mean_hops / pairs : 0;
    result.max_link_load = load.empty() ? 0.0 : *std::max_element(load.begin(), load.end());
    return result;
}

namespace closed_form {

std::int64_t torus_diameter(const Cluster& cluster) {
    std::int64_t diameter = 0;
    for (const auto& dim : cluster.dims) diameter += dim.wraps ? dim.extent / 2 : dim.extent - 1;
    return diameter;
}

double torus_bisection_Bps(const Cluster& cluster, int dim) {
    const PhysicalDim& cut = cluster.dims[static_cast<std::size_t>(dim)];
    const double lines = d(cluster.chips() / cut.extent);  // rings crossing the cut plane
    const double links_per_line = cut.wraps ? 2.0 : 1.0;   // a ring is cut twice
    return lines * links_per_line * cut.bw_per_chip_Bps_one_way;
}

double fat_tree_bisection_Bps(const Cluster& cluster) {
    const PhysicalDim& fabric = cluster.dims.back();
    const double half_chips = d(cluster.chips()) / 2.0;
    const bool spine = fabric.members_per_leaf > 0 && fabric.members_per_leaf < fabric.extent;
    return half_chips * fabric.bw_per_chip_Bps_one_way / (spine ? fabric.oversubscription : 1.0);
}

double ring_max_link_load(const PhysicalDim& dim) { return dim.wraps ? 1.0 : 2.0; }

double torus_all_to_all_max_link_load(const Cluster& cluster) {
    double busiest = 0;
    const double chips = d(cluster.chips());
    for (const auto& dim : cluster.dims) {
        const double k = d(dim.extent);
        double pairs = 0;
        if (dim.wraps && dim.extent > 2) pairs = dim.extent % 2 == 0 ? k * k / 8.0 : (k * k - 1.0) / 8.0;
        else pairs = std::floor(k / 2.0) * std::ceil(k / 2.0);
        busiest = std::max(busiest, pairs * chips / k);
    }
    return busiest;
}

}  // namespace closed_form

}  // namespace ridgeline
