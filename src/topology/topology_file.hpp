#pragma once
// Custom topologies users describe in JSON (format ridgeline.topology/1): a chip and a stack of
// levels — a switch domain, a torus (of chips, or of whole domains), a fat tree, DCN, or a graph
// given link by link. The I/O edge of the topology module.
#include <filesystem>

#include "hardware/system.hpp"
#include "topology/cluster.hpp"

namespace ridgeline {

struct CustomTopology {
    Hardware hardware;  // the chip the file names (no system)
    Cluster cluster;
};

[[nodiscard]] CustomTopology load_topology_file(const std::filesystem::path& path, const std::filesystem::path& data_dir);

}  // namespace ridgeline
