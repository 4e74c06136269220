#pragma once
// The cost of a collective over a group of devices laid on a cluster's physical dimensions:
// time = fixed overhead + latency term (steps x per-hop latency) + bandwidth term, where the
// bandwidth term uses the algorithm each dimension allows (bidirectional rings where a torus axis
// wraps, unidirectional where it does not, several axes at once, hierarchical switch + fabric)
// and levels run pipelined, so the slowest level bounds it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mesh/mesh.hpp"
#include "topology/cluster.hpp"

namespace ridgeline {

enum class CollectiveKind { all_gather, reduce_scatter, all_reduce, all_to_all, permute, broadcast };

[[nodiscard]] std::optional<CollectiveKind> parse_collective(std::string_view text);
[[nodiscard]] const char* collective_name(CollectiveKind kind);

// Tokens routed to top_k of `experts` experts spread evenly over an AllToAll's members. With
// node deduplication (DeepEP's internode kernels) a token crosses the fabric once per node that
// holds one of its experts and is forwarded inside the node, instead of once per expert; node-limited
// routing (DeepSeek-V3) caps those nodes. Zero top_k: plain AllToAll.
struct RoutedTokens {
    double top_k = 0, experts = 0;
    double groups = 0, groups_per_token = 0;  // expert groups and how many a token may use (0: unlimited)
    bool node_dedup = false;
};

// Expected distinct members (of `members` holding equal shares of the experts) one routed token
// reaches: members x (1 - P[none of its top_k experts on a member]), capped by node-limited routing.
[[nodiscard]] double routed_members_reached(const RoutedTokens& routed, double members);

struct CollectiveOptions {
    // Ragged (top-k) AllToAll: the share of destinations a device actually sends to, min(k/N, 1).
    double destination_fraction = 1.0;
    // SHARP / NVLS: switches reduce in the network, so an AllReduce moves each byte once.
    bool in_network_reduction = false;
    // Drop the (N-1)/N factors: the large-group forms of hand analyses.
    bool asymptotic = false;
    RoutedTokens routed;
};

struct LevelCost {
    std::string name;        // e.g. "ici x+y (wraparound)", "nvlink", "ib spine (2:1 oversubscribed)"
    double bandwidth_s = 0;
    double latency_s = 0;
};

struct CollectiveCost {
    CollectiveKind kind = CollectiveKind::all_gather;
    double bytes = 0;
    std::int64_t group_size = 1;
    double overhead_s = 0;
    double latency_s = 0;
    double bandwidth_s = 0;
    std::string bottleneck;  // the level whose bandwidth term is largest
    std::vector<LevelCost> levels;
    [[nodiscard]] double time_s() const { return overhead_s + latency_s + bandwidth_s; }
    [[nodiscard]] bool latency_bound() const { return overhead_s + latency_s > bandwidth_s; }
};

// `bytes`: the logical array the group works on — the gathered output of an AllGather, the
// unreduced input of a ReduceScatter or AllReduce, the whole array an AllToAll redistributes,
// the buffer each device sends in a permute, the array a broadcast delivers.
[[nodiscard]] CollectiveCost collective_cost(const Cluster& cluster, const std::vector<GroupDim>& group,
                                             CollectiveKind kind, double bytes, const CollectiveOptions& options = {});

// Point-to-point send between two chips of level 0, given their coordinates on its dimensions:
// hops x latency + bytes over the links that lead towards the destination.
struct SendCost {
    std::int64_t hops = 0;
    int links_used = 0;
    double time_s = 0;
};
[[nodiscard]] SendCost send_cost(const Cluster& cluster, const std::vector<std::int64_t>& from,
                                 const std::vector<std::int64_t>& to, double bytes);

}  // namespace ridgeline
