#include "collective/collective.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "topology/graph_routing.hpp"

namespace ridgeline {

namespace {

constexpr std::string_view kNames[] = {"allgather", "reducescatter", "allreduce", "alltoall", "permute", "broadcast"};

double d(std::int64_t value) { return static_cast<double>(value); }

struct RingPart {
    const PhysicalDim* dim;
    std::int64_t k;
    std::int64_t stride;
    bool wraps;  // the group closes a ring (the whole axis, and the axis wraps)
    [[nodiscard]] double link_bw() const {
        // Interleaved groups on a strided axis share every link; a wrapped pair has two links.
        const double parallel_links = (wraps && k == 2) ? 2.0 : 1.0;
        return dim->collective_Bps() * parallel_links / d(stride);
    }
    [[nodiscard]] double ring_bw() const { return (wraps && k > 2) ? 2.0 * link_bw() : link_bw(); }
    [[nodiscard]] std::int64_t ring_steps() const { return wraps ? k / 2 : k - 1; }
};

// Share of the array each device must receive along a ring of k, in units of the array:
// a bidirectional ring moves whole shards in ceil((k-1)/2) steps, a unidirectional one in k-1.
double ring_fraction(const RingPart& part, bool asymptotic) {
    if (asymptotic) return 1.0;
    const double k = d(part.k);
    if (part.wraps && part.k > 2) return 2.0 * std::ceil((k - 1.0) / 2.0) / k;
    return (k - 1.0) / k;
}

// Pair messages crossing the busiest directed link of a ring (or line) of k under all-to-all.
double all_to_all_link_pairs(const RingPart& part, bool asymptotic) {
    const double k = d(part.k);
    if (part.wraps && part.k > 2) {
        if (asymptotic) return k * k / 8.0;
        return part.k % 2 == 0 ? k * k / 8.0 : (k * k - 1.0) / 8.0;
    }
    if (asymptotic) return k * k / 4.0;
    return std::floor(k / 2.0) * std::ceil(k / 2.0);
}

std::string ring_level_name(const std::vector<RingPart>& parts) {
    // Level 0 tori are chips joined by ICI; outer tori join whole domains.
    std::string name = parts.front().dim->level == 0 ? "ici " : "torus ";
    bool all_wrap = true;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        name += (i ? "+" : "") + parts[i].dim->name;
        all_wrap = all_wrap && parts[i].wraps;
    }
    return name + (all_wrap ? " (wraparound)" : " (no wraparound)");
}

// All ring dimensions of one level, used at once.
LevelCost ring_level(const std::vector<RingPart>& parts, CollectiveKind kind, double level_bytes, double pair_bytes,
                     std::int64_t level_chips, const CollectiveOptions& options) {
    LevelCost cost{ring_level_name(parts), 0, 0};
    double hops = 0;
    for (const RingPart& part : parts) hops += d(part.ring_steps() * part.stride) * part.dim->hop_latency_s;
    switch (kind) {
        case CollectiveKind::all_gather:
        case CollectiveKind::reduce_scatter:
        case CollectiveKind::all_reduce: {
            double fraction = 0, bandwidth = 0;
            for (const RingPart& part : parts) {
                fraction = std::max(fraction, ring_fraction(part, options.asymptotic));
                bandwidth += part.ring_bw();
            }
            const double passes = kind == CollectiveKind::all_reduce ? 2.0 : 1.0;
            cost.bandwidth_s = passes * level_bytes * fraction / bandwidth;
            cost.latency_s = passes * hops;
            break;
        }
        case CollectiveKind::all_to_all:
            for (const RingPart& part : parts) {
                const double pairs = all_to_all_link_pairs(part, options.asymptotic) * d(level_chips) / d(part.k);
                cost.bandwidth_s = std::max(cost.bandwidth_s, pairs * pair_bytes * options.destination_fraction / part.link_bw());
            }
            cost.latency_s = hops;
            break;
        case CollectiveKind::permute:
            cost.bandwidth_s = level_bytes / parts.front().link_bw();
            cost.latency_s = d(parts.front().stride) * parts.front().dim->hop_latency_s;
            break;
        case CollectiveKind::broadcast: {
            double slowest = 1e300;
            for (const RingPart& part : parts) slowest = std::min(slowest, part.link_bw());
            cost.bandwidth_s = level_bytes / slowest;  // pipelined: every link carries the array once
            cost.latency_s = hops;
            break;
        }
    }
    return cost;
}

// A custom graph: a bidirectional ring over its members in index order, each step as slow as
// the busiest link it loads; all-to-all as loaded by shortest-path routing.
LevelCost graph_level(const PhysicalDim& dim, std::int64_t k, CollectiveKind kind, double level_bytes,
                      double pair_bytes, const CollectiveOptions& options) {
    if (k != dim.extent)
        throw InputError(kRequest, std::string("axes.") + dim.name, "a collective over part of a custom graph dimension is not supported");
    LevelCost cost{dim.name + " (custom graph)", 0, 0};
    if (!dim.routing) throw std::logic_error("graph dimension " + dim.name + " has no routing");
    const GraphLoads& loads = dim.routing->loads();
    const double bandwidth = dim.collective_Bps();
    const double steps = std::ceil((d(k) - 1.0) / 2.0);
    const double step_s = (level_bytes / d(k)) * loads.ring_link_load / bandwidth;
    switch (kind) {
        case CollectiveKind::all_gather:
        case CollectiveKind::reduce_scatter:
            cost.bandwidth_s = steps * step_s;
            cost.latency_s = steps * dim.hop_latency_s;
            break;
        case CollectiveKind::all_reduce:
            cost.bandwidth_s = 2.0 * steps * step_s;
            cost.latency_s = 2.0 * steps * dim.hop_latency_s;
            break;
        case CollectiveKind::all_to_all:
            cost.bandwidth_s = loads.all_to_all_link_load * pair_bytes * options.destination_fraction / bandwidth;
            cost.latency_s = d(loads.diameter) * dim.hop_latency_s;
            break;
        case CollectiveKind::permute:  // one direction of the ring schedule
            cost.bandwidth_s = level_bytes * std::max(1.0, loads.ring_link_load / 2.0) / bandwidth;
            cost.latency_s = dim.hop_latency_s;
            break;
        case CollectiveKind::broadcast:
            cost.bandwidth_s = level_bytes / bandwidth;
            cost.latency_s = d(loads.diameter) * dim.hop_latency_s;
            break;
    }
    return cost;
}

// One switched or fabric dimension with `k` members of the group on it.
LevelCost flat_level(const PhysicalDim& dim, std::int64_t k, CollectiveKind kind, double level_bytes, double pair_bytes,
                     std::int64_t group_size, std::int64_t inner_chips, const CollectiveOptions& options) {
    LevelCost cost{dim.name, 0, 0};
    const double bandwidth = dim.collective_Bps();
    const double members = d(k);
    const double fraction = options.asymptotic ? 1.0 : (members - 1.0) / members;
    const bool fabric = dim.kind == DimKind::fabric;
    // Beyond one leaf group of a fat tree, the share crossing the spine sees the oversubscription.
    double spine_penalty = 1.0;
    if (fabric && dim.members_per_leaf > 0 && k > dim.members_per_leaf && dim.oversubscription > 1.0) {
        const double leaves = std::ceil(members / d(dim.members_per_leaf));
        const double crossing = options.asymptotic ? 1.0 : (leaves - 1.0) / leaves;
        spine_penalty = std::max(1.0, crossing * dim.oversubscription / fraction);
        if (spine_penalty > 1.0)
            cost.name = dim.name + " spine (" + std::to_string(static_cast<int>(dim.oversubscription)) + ":1 oversubscribed)";
    }
    const double ring_latency = (members - 1.0) * dim.hop_latency_s;
    switch (kind) {
        case CollectiveKind::all_gather:
        case CollectiveKind::reduce_scatter:
            cost.bandwidth_s = level_bytes * fraction * spine_penalty / bandwidth;
            cost.latency_s = ring_latency;
            break;
        case CollectiveKind::all_reduce:
            if (options.in_network_reduction) {
                cost.bandwidth_s = level_bytes * spine_penalty / bandwidth;  // each byte up to the switch once
                cost.latency_s = 2.0 * dim.hop_latency_s;
            } else {
                cost.bandwidth_s = 2.0 * level_bytes * fraction * spine_penalty / bandwidth;
                // Trees across a fabric keep the latency logarithmic; rings inside a node.
                cost.latency_s = fabric ? 2.0 * std::ceil(std::log2(members)) * dim.hop_latency_s : 2.0 * ring_latency;
            }
            break;
        case CollectiveKind::all_to_all: {
            // Pair messages leaving through this level: to every group member outside the inner part.
            const double destinations = fabric ? (options.asymptotic ? d(group_size) : d(group_size - inner_chips * 1))
                                               : (options.asymptotic ? members : members - 1.0);
            // Deduplicated, each token leaves for the nodes it reaches, not for each of its k experts.
            const RoutedTokens& r = options.routed;
            const double dedup = fabric && r.node_dedup && r.top_k > 0 ? routed_members_reached(r, members) / r.top_k : 1.0;
            cost.bandwidth_s = destinations * pair_bytes * options.destination_fraction * dedup * spine_penalty / bandwidth;
            cost.latency_s = dim.hop_latency_s;
            break;
        }
        case CollectiveKind::permute:
            cost.bandwidth_s = level_bytes * spine_penalty / bandwidth;
            cost.latency_s = dim.hop_latency_s;
            break;
        case CollectiveKind::broadcast:
            cost.bandwidth_s = level_bytes * spine_penalty / bandwidth;
            cost.latency_s = std::ceil(std::log2(std::max(2.0, members))) * dim.hop_latency_s;
            break;
    }
    return cost;
}

}  // namespace

std::optional<CollectiveKind> parse_collective(std::string_view text) {
    for (std::size_t i = 0; i < std::size(kNames); ++i)
        if (kNames[i] == text) return static_cast<CollectiveKind>(i);
    if (text == "sendrecv" || text == "send") return CollectiveKind::permute;
    return std::nullopt;
}

double routed_members_reached(const RoutedTokens& routed, double members) {
    const double k = routed.top_k, experts = routed.experts;
    if (members <= 1 || k <= 0 || experts <= 0) return std::min(members, 1.0);
    // Hypergeometric: the chance that none of k distinct experts lies among a member's share.
    const double elsewhere = experts - experts / members;
    double none_here = 1.0;
    for (double i = 0; i < k && none_here > 0; ++i) none_here *= std::max(0.0, elsewhere - i) / (experts - i);
    double reached = members * (1.0 - none_here);
    if (routed.groups_per_token > 0 && routed.groups > 0)
        reached = std::min(reached, routed.groups_per_token * std::max(1.0, members / routed.groups));
    return std::min(reached, k);
}

const char* collective_name(CollectiveKind kind) { return kNames[static_cast<std::size_t>(kind)].data(); }

CollectiveCost collective_cost(const Cluster& cluster, const std::vector<GroupDim>& group, CollectiveKind kind,
                               double bytes, const CollectiveOptions& options) {
    CollectiveCost cost;
    cost.kind = kind;
    cost.bytes = bytes;
    for (const GroupDim& g : group) cost.group_size *= g.extent;
    if (cost.group_size <= 1 || bytes <= 0) return cost;
    cost.overhead_s = cluster.collective_overhead_s;
    // Each device's share of the traffic to every other member (AllToAll).
    const double pair_bytes = bytes / (d(cost.group_size) * d(cost.group_size));

    std::int64_t inner_chips = 1;  // group members inside one member of the current level
    for (int level = 0; level < cluster.levels(); ++level) {
        std::vector<RingPart> rings;
        std::int64_t level_chips = 1;
        const PhysicalDim* flat = nullptr;
        std::int64_t flat_k = 1;
        for (const GroupDim& g : group) {
            const PhysicalDim& dim = cluster.dims[static_cast<std::size_t>(g.dim)];
            if (dim.level != level || g.extent <= 1) continue;
            level_chips *= g.extent;
            if (dim.kind == DimKind::ring) {
                rings.push_back({&dim, g.extent, g.stride, dim.wraps && g.extent * g.stride == dim.extent});
            } else {
                flat = &dim;
                flat_k = g.extent;
            }
        }
        if (level_chips == 1) continue;
        // Hierarchical: the inner members split this level's work between them.
        const double level_bytes = kind == CollectiveKind::all_to_all || kind == CollectiveKind::permute
                                       ? bytes
                                       : bytes / d(inner_chips);
        LevelCost level_cost =
            flat == nullptr ? ring_level(rings, kind, level_bytes, pair_bytes, level_chips, options)
            : flat->kind == DimKind::graph
                ? graph_level(*flat, flat_k, kind, level_bytes, pair_bytes, options)
                : flat_level(*flat, flat_k, kind, level_bytes, pair_bytes, cost.group_size, inner_chips, options);
        cost.latency_s += level_cost.latency_s;
        if (level_cost.bandwidth_s >= cost.bandwidth_s) {
            cost.bandwidth_s = level_cost.bandwidth_s;
            cost.bottleneck = level_cost.name;
        }
        cost.levels.push_back(level_cost);
        inner_chips *= level_chips;
    }
    return cost;
}

SendCost send_cost(const Cluster& cluster, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to,
                   double bytes) {
    SendCost cost;
    double latency = 0, bandwidth = 0;
    std::size_t coordinate = 0;
    for (const PhysicalDim& dim : cluster.dims) {
        if (dim.level != 0) continue;
        if (coordinate >= from.size() || coordinate >= to.size())
            throw InputError("coordinates", "", "expected one coordinate per level-0 dimension");
        const std::int64_t a = from[coordinate], b = to[coordinate];
        ++coordinate;
        if (a < 0 || b < 0 || a >= dim.extent || b >= dim.extent)
            throw InputError("coordinates", dim.name, "outside the dimension of size " + std::to_string(dim.extent));
        if (a == b) continue;
        std::int64_t distance = std::llabs(a - b);
        int links = 1;
        if (dim.kind == DimKind::ring && dim.wraps) {
            const std::int64_t around = dim.extent - distance;
            if (around == distance) links = 2;  // both ways are shortest
            distance = std::min(distance, around);
        }
        if (dim.kind != DimKind::ring) distance = 1;
        cost.hops += distance;
        cost.links_used += links;
        bandwidth += links * dim.collective_Bps();
        latency += static_cast<double>(distance) * dim.hop_latency_s;
    }
    if (bandwidth > 0) cost.time_s = bytes / bandwidth + latency;
    return cost;
}

}  // namespace ridgeline
