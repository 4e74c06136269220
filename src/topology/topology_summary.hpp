#pragma once
// What `ridgeline topology` reports: the levels, and the graph's figures beside the closed forms.
#include <optional>
#include <string>
#include <vector>

#include "topology/graph.hpp"

namespace ridgeline {

struct BisectionFigure {
    std::string dim;
    double graph_Bps = 0;
    std::optional<double> closed_form_Bps;
};

struct TopologySummary {
    Cluster cluster;
    bool graph_built = false;  // false above the size limit: closed forms only
    std::int64_t switches = 0;
    std::int64_t links = 0;
    bool connected = true;
    HopStats hops;
    std::optional<std::int64_t> closed_form_diameter;
    std::vector<BisectionFigure> bisections;  // one per dimension with an even extent
    std::optional<double> all_to_all_link_load;
    std::optional<double> closed_form_all_to_all_link_load;
};

[[nodiscard]] TopologySummary summarize_topology(const Cluster& cluster, std::int64_t graph_chip_limit = 4096,
                                                 std::int64_t all_to_all_chip_limit = 1024);

}  // namespace ridgeline
