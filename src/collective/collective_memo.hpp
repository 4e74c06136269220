#pragma once
// Collective costs on one cluster, remembered. A search costs the same collective on the same
// devices many times over (every placement that leaves an axis where it was, every knob of a
// layout), so it looks them up instead.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "collective/collective.hpp"

namespace ridgeline {

class CollectiveMemo {
public:
    explicit CollectiveMemo(std::size_t capacity = 4096) : capacity_(capacity) {}
    // The cost on `cluster`, which must be the same cluster on every call.
    [[nodiscard]] const CollectiveCost& cost(const Cluster& cluster, const std::vector<GroupDim>& group, CollectiveKind kind,
                                             double bytes, const RoutedTokens& routed = {});

private:
    struct Entry {
        CollectiveKind kind;
        double bytes;
        std::vector<GroupDim> group;
        RoutedTokens routed;
        CollectiveCost cost;
    };
    std::size_t capacity_;
    std::vector<Entry> entries_;
    std::unordered_multimap<std::uint64_t, std::size_t> index_;
};

}  // namespace ridgeline
