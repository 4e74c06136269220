#include "collective/collective_memo.hpp"

#include <algorithm>
#include <bit>

namespace ridgeline {

namespace {

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
    return (hash ^ value) * 0x100000001b3ULL + (hash >> 29);
}

std::uint64_t key(const std::vector<GroupDim>& group, CollectiveKind kind, double bytes) {
    std::uint64_t hash = mix(0xcbf29ce484222325ULL, static_cast<std::uint64_t>(kind));
    hash = mix(hash, std::bit_cast<std::uint64_t>(bytes));
    for (const GroupDim& g : group) {
        hash = mix(hash, static_cast<std::uint64_t>(g.dim));
        hash = mix(hash, static_cast<std::uint64_t>(g.extent));
        hash = mix(hash, static_cast<std::uint64_t>(g.stride));
    }
    return hash;
}

bool same(const RoutedTokens& a, const RoutedTokens& b) {
    return a.top_k == b.top_k && a.experts == b.experts && a.groups == b.groups && a.groups_per_token == b.groups_per_token &&
           a.node_dedup == b.node_dedup;
}

bool same(const std::vector<GroupDim>& a, const std::vector<GroupDim>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].dim != b[i].dim || a[i].extent != b[i].extent || a[i].stride != b[i].stride) return false;
    return true;
}

}  // namespace

CollectiveMemo::CollectiveMemo(std::size_t capacity) : capacity_(capacity), slots_(std::bit_ceil(2 * std::max<std::size_t>(capacity, 1))) {}

const CollectiveCost& CollectiveMemo::cost(const Cluster& cluster, const std::vector<GroupDim>& group, CollectiveKind kind,
                                           double bytes, const RoutedTokens& routed) {
    const std::uint64_t k = mix(key(group, kind, bytes), std::bit_cast<std::uint64_t>(routed.top_k));
    const std::size_t mask = slots_.size() - 1;
    std::size_t at = static_cast<std::size_t>(k ^ (k >> 32)) & mask;
    for (; slots_[at].entry != kEmpty; at = (at + 1) & mask) {
        if (slots_[at].key != k) continue;
        const Entry& e = entries_[slots_[at].entry];
        if (e.kind == kind && e.bytes == bytes && same(e.group, group) && same(e.routed, routed)) return e.cost;
    }
    if (entries_.size() >= capacity_) {  // forget everything: simpler than eviction, and rare
        entries_.clear();
        std::fill(slots_.begin(), slots_.end(), Slot{});
        at = static_cast<std::size_t>(k ^ (k >> 32)) & mask;
    }
    CollectiveOptions options;
    options.routed = routed;
    entries_.push_back({kind, bytes, group, routed, collective_cost(cluster, group, kind, bytes, options)});
    slots_[at] = {k, static_cast<std::uint32_t>(entries_.size() - 1)};
    return entries_.back().cost;
}

}  // namespace ridgeline
