#include "topology/graph_routing.hpp"

#include <utility>

#include "topology/graph.hpp"

namespace ridgeline {

GraphRouting::GraphRouting(PhysicalDim level) : level_(std::move(level)) { level_.routing.reset(); }

const GraphLoads& GraphRouting::loads() const {
    std::call_once(once_, [this] {
        Cluster alone;
        alone.dims.push_back(level_);
        const TopologyGraph graph(alone);
        std::vector<std::int64_t> ring;
        for (std::int64_t chip = 0; chip < level_.extent; ++chip) ring.push_back(chip);
        const AllPairsRouting all_pairs = graph.all_pairs_routing();
        loads_ = {graph.ring_max_link_load(ring), all_pairs.max_link_load, all_pairs.hops.diameter};
    });
    return loads_;
}

}  // namespace ridgeline
