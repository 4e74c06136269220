// The Boost.Graph view of built-in topologies against their closed forms, mesh placement, and
// physical properties every collective must have.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "collective/collective.hpp"
#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "test_support.hpp"
#include "topology/graph.hpp"
#include "topology/graph_routing.hpp"
#include "topology/topology_file.hpp"

using namespace ridgeline;

namespace {
Cluster ring_cluster(const std::vector<std::int64_t>& dims, const std::vector<bool>& wraps, double bw = 4.5e10) {
    Cluster cluster;
    const char* names[] = {"x", "y", "z"};
    for (std::size_t i = 0; i < dims.size(); ++i)
        cluster.dims.push_back(make_ring_dim(names[i], 0, dims[i], wraps[i], bw, 1e-6));
    return cluster;
}

std::vector<std::int64_t> ring_along_x(const TopologyGraph& graph, std::int64_t k) {
    std::vector<std::int64_t> ring;
    for (std::int64_t i = 0; i < k; ++i) ring.push_back(graph.chip_index({i, 0, 0}));
    return ring;
}
}  // namespace

TEST_CASE("tori with and without wraparound: graph figures equal the closed forms") {
    const std::vector<std::pair<std::vector<std::int64_t>, std::vector<bool>>> shapes = {
        {{8}, {true}},           {{8}, {false}},          {{4, 4}, {true, true}},   {{4, 6}, {false, false}},
        {{4, 4, 4}, {true, true, true}}, {{2, 2, 4}, {false, false, false}}, {{5, 3}, {true, true}}, {{16, 8}, {true, false}}};
    for (const auto& [dims, wraps] : shapes) {
        const Cluster cluster = ring_cluster(dims, wraps);
        const TopologyGraph graph(cluster);
        CAPTURE(dims.size());
        CAPTURE(dims[0]);
        CHECK(graph.connected());
        CHECK(graph.hop_stats().diameter == closed_form::torus_diameter(cluster));
        for (int dim = 0; dim < static_cast<int>(dims.size()); ++dim) {
            if (dims[static_cast<std::size_t>(dim)] % 2 != 0) continue;  // even halves only
            CHECK(graph.bisection_bandwidth_Bps(dim) == doctest::Approx(closed_form::torus_bisection_Bps(cluster, dim)));
        }
        if (dims[0] > 2)
            CHECK(graph.ring_max_link_load(ring_along_x(graph, dims[0])) == doctest::Approx(closed_form::ring_max_link_load(cluster.dims[0])));
        if (std::all_of(wraps.begin(), wraps.end(), [](bool w) { return w; }) || dims.size() == 1)
            CHECK(graph.all_pairs_routing().max_link_load == doctest::Approx(closed_form::torus_all_to_all_max_link_load(cluster)));
    }
}

TEST_CASE("a two-level fat tree (DGX nodes under leaves and a spine): graph equals closed form") {
    for (double oversubscription : {1.0, 2.0}) {
        Cluster cluster = build_cluster(resolve_hardware("dgx-h100", test::source_dir()), {{}, 8, 0});
        cluster.dims.back().members_per_leaf = 2;  // four leaves of two nodes
        cluster.dims.back().oversubscription = oversubscription;
        const TopologyGraph graph(cluster);
        CHECK(graph.chips() == 64);
        CHECK(graph.switches() == 8 + 4 + 1);  // one NVSwitch hub per node, four leaves, one spine
        CHECK(graph.bisection_bandwidth_Bps(cluster.find_dim("ib")) ==
              doctest::Approx(closed_form::fat_tree_bisection_Bps(cluster)));
        // Same node: chip, NVSwitch, chip. Same leaf: up and down one switch. Across leaves: through the spine.
        CHECK(graph.hop_stats().diameter == 4);
    }
}

// A custom graph's routing, worked by hand. The 16-chip hypercube: a chip is k hops from C(4,k)
// others, so all-pairs routing crosses 16 x (4 + 2x6 + 3x4 + 4) = 512 directed links, spread
// evenly by symmetry over its 64, 8 each; mean 32/15 hops, diameter 4. A path 3-1-0-2-4, where
// chip 0 is in the middle: the diameter is 4 (chip 0 alone sees 2), each middle link carries the
// 2 x 3 messages that cross it, and the 5 x 4 ordered pairs are 2 x (4x1 + 3x2 + 2x3 + 1x4) = 40
// hops apart.
TEST_CASE("custom graphs: all-pairs routing and the routing collectives use, from the file, worked by hand") {
    const auto cube = load_topology_file(test::source_dir() / "hardware" / "topologies" / "hypercube-16.json", test::source_dir());
    const PhysicalDim& level = cube.cluster.dims.at(0);
    REQUIRE(level.routing);
    CHECK(level.routing->loads().all_to_all_link_load == doctest::Approx(8.0));
    CHECK(level.routing->loads().diameter == 4);
    const AllPairsRouting cube_routes = TopologyGraph(cube.cluster).all_pairs_routing();
    CHECK(cube_routes.max_link_load == doctest::Approx(8.0));
    CHECK(cube_routes.hops.mean_hops == doctest::Approx(32.0 / 15.0));

    Cluster path;
    path.dims.push_back(make_switched_dim("path", 5, 4.5e10, 1e-6));
    path.dims[0].kind = DimKind::graph;
    path.dims[0].links = {{0, 1}, {0, 2}, {1, 3}, {2, 4}};
    const TopologyGraph graph(path);
    const AllPairsRouting routes = graph.all_pairs_routing();
    CHECK(routes.hops.diameter == 4);
    CHECK(graph.hop_stats(/*exact_limit=*/1).diameter == 2);  // from chip 0 only
    CHECK(routes.max_link_load == doctest::Approx(6.0));
    CHECK(routes.hops.mean_hops == doctest::Approx(40.0 / 20.0));
    const GraphRouting routing(path.dims[0]);
    CHECK(routing.loads().diameter == 4);
    CHECK(routing.loads().all_to_all_link_load == doctest::Approx(6.0));
}

TEST_CASE("mesh placement: hungry axes innermost, explicit order, and refusals") {
    const Cluster cluster = build_cluster(resolve_hardware("dgx-h100", test::source_dir()), {{}, 4, 0});
    const Mesh mesh = place_mesh(cluster, {{"data", 4}, {"tensor", 8}}, {});
    REQUIRE(mesh.axes.size() == 2);
    CHECK(mesh.axes[0].axis.name == "tensor");  // on NVLink
    CHECK(mesh.axes[0].spans[0].dim == cluster.find_dim("nvlink"));
    CHECK(mesh.axes[1].spans[0].dim == cluster.find_dim("ib"));
    // An axis of 16 straddles the node: 8 on NVLink, 2 nodes at stride 1.
    const Mesh straddle = place_mesh(cluster, {{"data", 2}, {"fsdp", 16}}, {});
    CHECK(straddle.axes[0].axis.name == "fsdp");
    CHECK(straddle.axes[0].spans.size() == 2);
    CHECK(straddle.axes[1].spans[0].stride == 2);

    CHECK_THROWS_AS((void)place_mesh(cluster, {{"data", 4}, {"tensor", 4}}, {}), InputError);   // 16 != 32 chips
    // An explicit order overrides the default: data innermost.
    CHECK(place_mesh(cluster, {{"data", 2}, {"tensor", 16}}, {"data", "tensor"}).axes[0].axis.name == "data");
    CHECK_THROWS_AS((void)place_mesh(cluster, {{"a", 3}, {"b", 32 / 3}}, {}), InputError);
    CHECK_THROWS_AS((void)group_footprint(mesh, {"expert"}, "--axes"), InputError);
}

TEST_CASE("auto torus shapes fit the pod and prefer wraparound") {
    const Hardware v5p = resolve_hardware("tpu-v5p", test::source_dir());
    const auto cube = auto_torus_shape(64, v5p.system->scale_up);
    CHECK(cube == std::vector<std::int64_t>{4, 4, 4});
    const Cluster pod = build_cluster(v5p, {{}, 0, 8960});
    CHECK(pod.chips() == 8960);
    CHECK(pod.dims.size() == 3);
    const Cluster two_pods = build_cluster(v5p, {{}, 0, 2 * 8960});
    CHECK(two_pods.find_dim("dcn") == 3);
    CHECK_THROWS_AS((void)build_cluster(v5p, {{32, 32, 32}, 0, 0}), InputError);
}

TEST_CASE("property: collectives never get faster with slower links or larger messages") {
    std::mt19937_64 rng(20261122);
    std::uniform_int_distribution<int> kind_pick(0, 5);
    std::uniform_real_distribution<double> log_bytes(3, 11);
    const std::vector<std::string> systems = {"tpu-v5p", "tpu-v5e", "dgx-h100", "gb200-nvl72"};
    const std::vector<ClusterShape> shapes = {{{4, 4, 8}, 2, 0}, {{16, 16}, 0, 0}, {{}, 4, 0}, {{}, 2, 0}};
    for (int trial = 0; trial < 400; ++trial) {
        const std::size_t s = static_cast<std::size_t>(trial) % systems.size();
        const Cluster base = build_cluster(resolve_hardware(systems[s], test::source_dir()), shapes[s]);
        const Mesh mesh = physical_mesh(base);
        std::vector<std::string> axes;
        for (const auto& placed : mesh.axes)
            if (rng() % 2 == 0) axes.push_back(placed.axis.name);
        if (axes.empty()) axes.push_back(mesh.axes.front().axis.name);
        const auto group = group_footprint(mesh, axes, "axes");
        const auto kind = static_cast<CollectiveKind>(kind_pick(rng));
        const double bytes = std::pow(10.0, log_bytes(rng));
        const double base_s = collective_cost(base, group, kind, bytes).time_s();
        CAPTURE(trial);
        CHECK(std::isfinite(base_s));
        CHECK(collective_cost(base, group, kind, bytes * 1.7).time_s() >= base_s);
        Cluster slower = base;
        slower.dims[static_cast<std::size_t>(rng() % slower.dims.size())].bw_per_chip_Bps_one_way *= 0.6;
        CHECK(collective_cost(slower, group, kind, bytes).time_s() >= base_s);
        Cluster laggier = base;
        laggier.dims[static_cast<std::size_t>(rng() % laggier.dims.size())].hop_latency_s *= 3;
        CHECK(collective_cost(laggier, group, kind, bytes).time_s() >= base_s);
    }
}

TEST_CASE("each result names its bottleneck and bound") {
    const Cluster cluster = build_cluster(resolve_hardware("dgx-h100", test::source_dir()), {{}, 16, 0});
    const auto all = group_footprint(physical_mesh(cluster), {"nvlink", "ib"}, "axes");
    const CollectiveCost big = collective_cost(cluster, all, CollectiveKind::all_reduce, 1e9);
    CHECK(big.bottleneck == "ib");
    CHECK_FALSE(big.latency_bound());
    const CollectiveCost tiny = collective_cost(cluster, all, CollectiveKind::all_reduce, 1e3);
    CHECK(tiny.latency_bound());
    const Cluster v5e = build_cluster(resolve_hardware("tpu-v5e", test::source_dir()), {{8, 16}, 0, 0});
    CHECK(collective_cost(v5e, group_footprint(physical_mesh(v5e), {"x"}, "a"), CollectiveKind::all_gather, 1e9).bottleneck ==
          "ici x (no wraparound)");
    CHECK(collective_cost(v5e, group_footprint(physical_mesh(v5e), {"y"}, "a"), CollectiveKind::all_gather, 1e9).bottleneck ==
          "ici y (wraparound)");
}

TEST_CASE("jobs on part of each scale-up domain: 256 GB200s as 4 NVL72 racks of 16 trays, never part of a DGX node") {
    const Hardware nvl72 = resolve_hardware("nvl72", test::source_dir());
    ClusterShape racks;
    racks.chips = 256;
    const Cluster four = build_cluster(nvl72, racks);
    REQUIRE(four.dims.size() == 2);
    CHECK(four.dims[0].extent == 64);
    CHECK(four.dims[1].extent == 4);
    CHECK(four.chips() == 256);
    racks.domains = 8;  // given: 8 racks of 32
    CHECK(build_cluster(nvl72, racks).dims[0].extent == 32);
    ClusterShape uneven;
    uneven.chips = 250;  // 4 racks would hold 62.5 each
    CHECK_THROWS_AS((void)build_cluster(nvl72, uneven), InputError);
    ClusterShape trays;
    trays.chips = 216;  // 3 racks of 72
    CHECK(build_cluster(nvl72, trays).dims[0].extent == 72);
    trays.chips = 150;  // 3 racks of 50: not whole 4-GPU trays
    CHECK_THROWS_AS((void)build_cluster(nvl72, trays), InputError);
    ClusterShape nodes;  // a DGX node is one host: 12 GPUs are not 2 whole nodes
    nodes.chips = 12;
    CHECK_THROWS_AS((void)build_cluster(resolve_hardware("dgx-h100", test::source_dir()), nodes), InputError);
}
