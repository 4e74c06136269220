// Every case of the scaling book's reference set on collectives, sharding, sharded matmuls and GPU
// networks, computed through Ridgeline's topology, mesh and collective models from the case's
// inputs (or the shipped hardware the case names); expected value and tolerance from the case.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "collective/collective.hpp"
#include "engine/roofline.hpp"
#include "hardware/catalog.hpp"
#include "io/json_reader.hpp"
#include "sharding/partition.hpp"
#include "test_support.hpp"
#include "topology/graph.hpp"

using namespace ridgeline;
using nlohmann::json;

namespace {

double num(const json& in, const char* key) { return in.at(key).get<double>(); }

// A torus of the given axes, all with the same links.
Cluster torus(const std::vector<std::int64_t>& dims, const std::vector<bool>& wraps, double link_bw, double hop_latency = 1e-6) {
    Cluster cluster;
    const char* names[] = {"x", "y", "z"};
    for (std::size_t i = 0; i < dims.size(); ++i)
        cluster.dims.push_back(make_ring_dim(names[i], 0, dims[i], wraps[i], link_bw, hop_latency));
    return cluster;
}

// A shipped system at its datasheet link rates: the scaling book's analyses use those.
Cluster shipped(const std::string& hardware, ClusterShape shape) {
    shape.datasheet_links = true;
    return build_cluster(resolve_hardware(hardware, test::source_dir()), shape);
}

std::vector<GroupDim> group(const Cluster& cluster, const std::vector<std::string>& axes) {
    return group_footprint(physical_mesh(cluster), axes, "axes");
}

Cluster dgx_h100_nodes(std::int64_t nodes) { return shipped("dgx-h100", {{}, nodes, 0}); }

// Message size at which a collective's bandwidth term equals its latency term (both linear).
double latency_threshold_bytes(const std::function<CollectiveCost(double)>& at) {
    const CollectiveCost one = at(1.0);
    return one.latency_s / one.bandwidth_s;
}

ShardedArray array(std::vector<double> shape, double bytes, std::vector<std::vector<std::string>> spec) {
    return {std::move(shape), bytes, std::move(spec)};
}

std::vector<MeshAxis> mesh_of(const json& mesh) {
    std::vector<MeshAxis> axes;
    for (const auto& item : mesh.items()) axes.push_back({item.key(), item.value().get<std::int64_t>()});
    return axes;
}

const std::map<std::string, test::CaseFunction>& case_functions() {
    static const std::map<std::string, test::CaseFunction> functions = {
        {"tpu-09", [](const json& in) {
             const Cluster c = torus({4, 4}, {false, false}, num(in, "ici_unidir_bytes_per_s"), num(in, "hop_latency_s"));
             const SendCost send = send_cost(c, {0, 0}, {3, 3}, num(in, "bytes"));
             CHECK(send.hops == in.at("hops").get<std::int64_t>());
             CHECK(send.links_used == in.at("links_used").get<int>());
             return send.time_s * 1e6;
         }},
        {"tpu-10", [](const json& in) {
             // Gather a host-offloaded array into chip 0 of a 4x4 (no wraparound): PCIe, ICI incast,
             // HBM and FLOPs run pipelined, so the slowest bounds it.
             const double bytes = num(in, "array_bytes"), chips = num(in, "chips");
             const Cluster c = torus({4, 4}, {false, false}, num(in, "ici_unidir_bytes_per_s"));
             const double incast_Bps = TopologyGraph(c).max_flow_into_Bps(0);
             CHECK(incast_Bps == doctest::Approx(num(in, "links_into_dest") * num(in, "ici_unidir_bytes_per_s")));
             const double ici_s = bytes * (chips - 1) / chips / incast_Bps;
             const double pcie_s = roofline_time(0, bytes / chips, 1, num(in, "pcie_bw_bytes_per_s")).memory_s;
             const double hbm_s = roofline_time(0, bytes, 1, num(in, "hbm_bw_bytes_per_s")).memory_s;
             const double flops_s = roofline_time(2.0 * 8 * 131072.0 * 131072.0, 0, num(in, "bf16_flops_per_s"), 1).compute_s;
             return std::max({ici_s, pcie_s, hbm_s, flops_s}) * 1e3;
         }},
        {"shard-01", [](const json& in) {
             const auto shape = in.at("shape");
             const ShardedArray a = array({shape[0].get<double>(), shape[1].get<double>()}, num(in, "dtype_bytes"), {{"X", "Y"}, {}});
             return roofline_time(0, local_bytes(a, mesh_of(in.at("mesh")), "case"), 1, num(in, "hbm_bw_bytes_per_s")).memory_s * 1e9;
         }},
        {"shard-02", [](const json& in) {
             const auto shape = in.at("shape");
             const ShardedArray a = array({shape[0].get<double>(), shape[1].get<double>()}, num(in, "dtype_bytes"), {{"X", "Y"}, {}});
             return total_bytes(a, mesh_of(in.at("mesh")), "case");
         }},
        {"shard-03", [](const json& in) {
             const ShardedArray a = array({64, 64, 64}, 2, {{"X"}, {}, {}});
             return total_bytes(a, mesh_of(in.at("mesh")), "case") / array_bytes(a);
         }},
        {"shard-04", [](const json& in) {
             const Cluster c = shipped("tpu-v5e", {{8, 4}, 0, 0});  // Y (4) does not wrap on v5e
             CHECK_FALSE(c.dims[1].wraps);
             const double bytes = num(in, "E") * num(in, "F") * num(in, "dtype_bytes");
             return collective_cost(c, group(c, {"y"}), CollectiveKind::all_gather, bytes).bandwidth_s * 1e6;
         }},
        {"shard-05", [](const json& in) {
             const Cluster c = shipped("tpu-v5e", {{8, 4}, 0, 0});
             const double bytes = num(in, "E") * num(in, "F") * num(in, "dtype_bytes");
             const CollectiveCost cost = collective_cost(c, group(c, {"y"}), CollectiveKind::all_gather, bytes);
             CHECK(cost.latency_bound());
             return cost.latency_s * 1e6;
         }},
        {"shard-06", [](const json& in) {
             const Cluster c = shipped("tpu-v4", {{4, 4, 4}, 0, 0});
             const double bytes = num(in, "B") * num(in, "D") * num(in, "dtype_bytes") / in.at("mesh").at("Y").get<double>();  // D stays sharded by Y
             return collective_cost(c, group(c, {"x"}), CollectiveKind::all_gather, bytes).bandwidth_s * 1e6;
         }},
        {"shard-07", [](const json& in) {
             const Cluster c = shipped("tpu-v4", {{4, 4, 4}, 0, 0});
             const double bytes = num(in, "B") * num(in, "D") * num(in, "dtype_bytes");
             return collective_cost(c, group(c, {"x", "y"}), CollectiveKind::all_gather, bytes).bandwidth_s * 1e6;
         }},
        {"shard-08", [](const json& in) {
             const Cluster c = shipped("tpu-v4", {{4, 4, 4}, 0, 0});
             const double bytes = num(in, "B") * num(in, "D") * num(in, "dtype_bytes") / (num(in, "X") * num(in, "Y"));
             return collective_cost(c, group(c, {"z"}), CollectiveKind::all_reduce, bytes).bandwidth_s * 1e6;
         }},
        {"shard-09", [](const json& in) {
             const Cluster c = shipped("tpu-v4", {{4, 4, 4}, 0, 0});
             const double bytes = num(in, "B") * num(in, "D") * num(in, "dtype_bytes");
             return collective_cost(c, group(c, {"x", "y", "z"}), CollectiveKind::all_gather, bytes).bandwidth_s * 1e6;
         }},
        {"shard-10", [](const json& in) {
             const Cluster c = shipped("tpu-v4", {{4, 4, 4}, 0, 0});
             const CollectiveCost cost = collective_cost(c, group(c, {"x"}), CollectiveKind::all_gather, num(in, "B") * num(in, "dtype_bytes"));
             CHECK(cost.latency_bound());
             return cost.latency_s * 1e6;
         }},
        {"shard-11", [](const json& in) {
             const Cluster c = torus({16}, {true}, num(in, "ici_unidir_bytes_per_s"), num(in, "hop_latency_s"));
             return latency_threshold_bytes([&](double bytes) {
                        return collective_cost(c, group(c, {"x"}), CollectiveKind::permute, bytes);
                    }) / 1e3;
         }},
        {"shard-12", [](const json& in) {
             Hardware hardware;
             hardware.chip.peak_flops_per_s[index_of(Dtype::bf16)] = num(in, "bf16_flops_per_s");
             hardware.chip.hbm_bw_Bps = 1;
             hardware.chip.host_link_Bps = 1;
             hardware.chip.scale_out.bw_per_chip_Bps_one_way = 1;
             hardware.chip.ici = IciSpec{6, 3, num(in, "ici_bidir_bytes_per_s") / 2, 1e-6};
             for (const RidgePoint& p : ridge_points(hardware))
                 if (p.level == "ici" && p.dtype == Dtype::bf16) return p.intensity_flops_per_byte;
             return 0.0;
         }},
        {"shard-13", [](const json& in) {
             const Cluster c = shipped("tpu-v5e", {{16, 16}, 0, 0});
             CHECK(c.dims[0].wraps);
             const double cost = collective_cost(c, group(c, {"x"}), CollectiveKind::all_to_all, num(in, "V_bytes")).bandwidth_s;
             return cost * 1e3;
         }},
        {"shard-14", [](const json& in) {
             const Cluster c = shipped("tpu-v5p", {{4, 4, 4}, 0, 0});
             return collective_cost(c, group(c, {"x", "y", "z"}), CollectiveKind::all_to_all, num(in, "V_bytes")).bandwidth_s * 1e6;
         }},
        {"shard-15", [](const json& in) {
             const Cluster c = shipped("tpu-v5p", {{4, 4, 4}, 0, 0});
             return collective_cost(c, group(c, {"x"}), CollectiveKind::all_reduce, num(in, "V_bytes")).bandwidth_s * 1e3;
         }},
        {"shard-16", [](const json& in) {
             return array_bytes(array({num(in, "D"), num(in, "F")}, num(in, "dtype_bytes"), {})) / 1e6;
         }},
        {"inf-17", [](const json& in) {
             // 8-way model parallelism on a v5e axis of 8: AllGather of the activations.
             const Cluster c = torus({8, 32}, {false, true}, num(in, "ici_unidir_bytes_per_s"), num(in, "hop_latency_s"));
             return latency_threshold_bytes([&](double bytes) {
                        return collective_cost(c, group(c, {"x"}), CollectiveKind::all_gather, bytes);
                    }) / 1e3;
         }},
        {"gpu-09", [](const json&) { return TopologyGraph(dgx_h100_nodes(1)).injection_bandwidth_Bps() / 1e12; }},
        {"gpu-10", [](const json& in) {
             const Cluster c = dgx_h100_nodes(1);
             const double bytes = num(in, "D") * num(in, "F") * num(in, "dtype_bytes");
             return collective_cost(c, group(c, {"nvlink"}), CollectiveKind::all_gather, bytes).bandwidth_s * 1e3;
         }},
        {"gpu-11", [](const json& in) {
             const Cluster c = dgx_h100_nodes(1);
             const double bytes = num(in, "B") * num(in, "F") * num(in, "dtype_bytes");
             return collective_cost(c, group(c, {"nvlink"}), CollectiveKind::all_gather, bytes).bandwidth_s * 1e6;
         }},
        {"gpu-12", [](const json& in) {
             const Cluster c = dgx_h100_nodes(in.at("degree").get<std::int64_t>());
             const double bytes = 1e9;
             const CollectiveCost cost = collective_cost(c, group(c, {"nvlink", "ib"}), CollectiveKind::all_gather, bytes);
             CHECK(cost.bottleneck == "ib");
             return bytes / cost.levels.back().bandwidth_s / 1e9;  // node-level collective bandwidth
         }},
        {"gpu-13", [](const json& in) {
             const Cluster c = dgx_h100_nodes(in.at("nodes").get<std::int64_t>());
             return collective_cost(c, group(c, {"nvlink", "ib"}), CollectiveKind::all_gather, num(in, "bytes")).bandwidth_s * 1e3;
         }},
        {"gpu-14", [](const json& in) {
             // The book's large-group forms: intra B/(8 W_gpu), cross-node B/(M W_node).
             CollectiveOptions asymptotic;
             asymptotic.asymptotic = true;
             const Cluster one = dgx_h100_nodes(1), two = dgx_h100_nodes(2);
             const double intra = collective_cost(one, group(one, {"nvlink"}), CollectiveKind::all_to_all, num(in, "bytes"), asymptotic).bandwidth_s;
             const double cross = collective_cost(two, group(two, {"nvlink", "ib"}), CollectiveKind::all_to_all, num(in, "bytes"), asymptotic).bandwidth_s;
             return cross / intra;
         }},
        {"gpu-27", [](const json&) {
             // Node egress of one NVL72 rack: the max-flow out of one of two racks.
             const Cluster c = shipped("gb200-nvl72", {{}, 2, 0});
             return TopologyGraph(c).bisection_bandwidth_Bps(c.find_dim("ib")) / 1e12;
         }},
        {"gpu-29", [](const json& in) {
             const std::vector<MeshAxis> mesh = {{"model", in.at("shards").get<std::int64_t>()}};
             return local_bytes(array({num(in, "D"), num(in, "F")}, num(in, "dtype_bytes"), {{}, {"model"}}), mesh, "case") / 1e6;
         }},
        {"gpu-31", [](const json& in) {
             const Cluster c = dgx_h100_nodes(in.at("nodes").get<std::int64_t>());
             const Mesh mesh = place_mesh(c, {{"X", 32}, {"Y", in.at("Y").get<std::int64_t>()}}, {"Y", "X"});
             const double bytes = num(in, "D") * num(in, "F") * num(in, "dtype_bytes") / num(in, "Y");  // F stays sharded by Y
             return collective_cost(c, group_footprint(mesh, {"X"}, "axes"), CollectiveKind::all_gather, bytes).bandwidth_s * 1e3;
         }},
        {"gpu-32", [](const json& in) {
             // Y = 16 spans two nodes; X = 16 across the SU. The book's form drops (N-1)/N.
             const Cluster c = dgx_h100_nodes(32);
             const Mesh mesh = place_mesh(c, {{"X", 16}, {"Y", 16}}, {"Y", "X"});
             CollectiveOptions asymptotic;
             asymptotic.asymptotic = true;
             const double bytes = num(in, "D") * num(in, "F") * num(in, "dtype_bytes") / num(in, "Y");
             return collective_cost(c, group_footprint(mesh, {"X"}, "axes"), CollectiveKind::all_gather, bytes, asymptotic).bandwidth_s * 1e3;
         }},
        {"gpu-33", [](const json& in) {
             const Cluster c = dgx_h100_nodes(1);
             CollectiveOptions ragged;
             ragged.asymptotic = true;  // the book's dense form B / (8 W)
             ragged.destination_fraction = std::min(num(in, "k") / num(in, "N"), 1.0);
             return collective_cost(c, group(c, {"nvlink"}), CollectiveKind::all_to_all, num(in, "bytes"), ragged).bandwidth_s * 1e6;
         }},
        {"gpu-34", [](const json& in) {
             const Cluster c = dgx_h100_nodes(1);
             CollectiveOptions sharp;
             sharp.in_network_reduction = true;
             const auto g = group(c, {"nvlink"});
             return collective_cost(c, g, CollectiveKind::all_reduce, num(in, "bytes")).bandwidth_s /
                    collective_cost(c, g, CollectiveKind::all_reduce, num(in, "bytes"), sharp).bandwidth_s;
         }},
        {"prof-02", [](const json& in) {
             // TPU v2 4x2: the axis of 2 wraps, so the pair is joined by two links.
             const Cluster c = torus({2, 4}, {true, false}, num(in, "ici_bidir_bytes_per_s") / 2);
             return collective_cost(c, group(c, {"x"}), CollectiveKind::permute, num(in, "shard_bytes")).bandwidth_s * 1e3;
         }},
    };
    return functions;
}

}  // namespace

TEST_CASE("scaling-book reference cases on collectives, sharding and GPU networks") {
    const int checked = test::check_reference_cases({"collectives", "sharding", "sharded_matmul", "gpu_network"}, case_functions());
    CHECK(checked == 32);
}

TEST_CASE("collectives in a training or serving cluster run at the share of each link NCCL was measured to reach") {
    // NCCL's maintainers: ~370 GB/s of NVLink 4's 450 GB/s (nccl-tests issue #212) and 46-48 GB/s
    // per 400 Gb/s NDR NIC (nccl-tests issue #290) in ring collectives.
    const double nvlink_Bps = 370e9, nic_Bps = 47e9, bytes = 1e9;
    const Cluster node = build_cluster(resolve_hardware("dgx-h100", test::source_dir()), {{}, 1, 0});
    const CollectiveCost inside = collective_cost(node, group(node, {"nvlink"}), CollectiveKind::all_reduce, bytes);
    CHECK(inside.bandwidth_s == doctest::Approx(2.0 * 7.0 / 8.0 * bytes / nvlink_Bps).scale(0).epsilon(0.002));

    // One GPU per node in a data-parallel ring of 16 nodes: every byte of the array but its own shard crosses its NIC.
    const Cluster nodes = build_cluster(resolve_hardware("dgx-h100", test::source_dir()), {{}, 16, 0});
    const CollectiveCost across = collective_cost(nodes, group(nodes, {"ib"}), CollectiveKind::reduce_scatter, bytes);
    CHECK(across.bandwidth_s == doctest::Approx(15.0 / 16.0 * bytes / nic_Bps).scale(0).epsilon(0.002));

    // The collective command and the book's analyses keep the datasheet rate.
    const Cluster datasheet = dgx_h100_nodes(1);
    CHECK(collective_cost(datasheet, group(datasheet, {"nvlink"}), CollectiveKind::all_reduce, bytes).bandwidth_s ==
          doctest::Approx(2.0 * 7.0 / 8.0 * bytes / 450e9));
}
