#pragma once
// Flags that pick a cluster and a mesh on it, shared by the commands that need one.
#include <string>

#include "cli/commands.hpp"
#include "cli/what_if.hpp"
#include "mesh/mesh.hpp"
#include "topology/cluster.hpp"

namespace ridgeline::cli {

struct ClusterFlags {
    std::string hardware;
    std::string topology;  // a torus shape such as 4x4x8, or a ridgeline.topology/1 file
    std::int64_t nodes = 0;
    std::int64_t chips = 0;
    std::string mesh;       // name=size,...; default: one axis per physical dimension
    std::string placement;  // mesh axes innermost first; default: by communication appetite
    std::string links = "datasheet";  // or "measured": the share of each link collectives reach (the chip's)
    WhatIfFlags what_if;
};

void add_cluster_flags(CLI::App& command, ClusterFlags& flags);

struct ResolvedCluster {
    Cluster cluster;
    Mesh mesh;
    std::vector<AppliedSetting> settings;  // --set, applied before the cluster was built
};
[[nodiscard]] ResolvedCluster resolve_cluster(const ClusterFlags& flags, const GlobalOptions& options);

}  // namespace ridgeline::cli
