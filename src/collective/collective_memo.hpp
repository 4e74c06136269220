#pragma once
// Collective costs on one cluster, remembered. A search costs the same collective on the same
// devices many times over (every placement that leaves an axis where it was, every knob of a
// layout), so it looks them up instead.
#include <cstdint>
#include <vector>

#include "collective/collective.hpp"

namespace ridgeline {

class CollectiveMemo {
public:
    explicit CollectiveMemo(std::size_t capacity = 4096);
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
    // Open addressing over twice the capacity in slots (a power of two): a lookup is a probe or two
    // in one array, which a search makes millions of times.
    struct Slot {
        std::uint64_t key = 0;
        std::uint32_t entry = kEmpty;
    };
    static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
    std::size_t capacity_;
    std::vector<Entry> entries_;
    std::vector<Slot> slots_;
};

}  // namespace ridgeline
