#pragma once
// A device mesh: named axes with sizes (data=64, fsdp=16, tensor=8) laid onto the physical
// dimensions of a cluster, innermost first, so that each axis knows which links it uses.
#include <cstdint>
#include <string>
#include <vector>

#include "topology/cluster.hpp"

namespace ridgeline {

struct MeshAxis {
    std::string name;
    std::int64_t size = 1;
};

// A piece of a physical dimension an axis occupies: `extent` positions, `stride` apart
// (stride > 1 when inner axes took the positions in between).
struct AxisSpan {
    int dim = 0;
    std::int64_t extent = 1;
    std::int64_t stride = 1;
};

struct PlacedAxis {
    MeshAxis axis;
    std::vector<AxisSpan> spans;
};

struct Mesh {
    std::vector<PlacedAxis> axes;  // innermost first
    [[nodiscard]] int find(const std::string& name) const;  // -1 when absent
    [[nodiscard]] std::int64_t size() const;
};

// "data=8,tensor=4" (InputError naming `flag` when malformed or an axis repeats).
[[nodiscard]] std::vector<MeshAxis> parse_mesh(const std::string& text, const std::string& flag);

// Lays axes onto the cluster's dimensions, innermost first. With `order` empty, the most
// communication-hungry axes (tensor, expert, context, fsdp, ...) go innermost, on the fastest
// links; otherwise `order` lists every axis name, innermost first. The mesh must cover every chip.
[[nodiscard]] Mesh place_mesh(const Cluster& cluster, const std::vector<MeshAxis>& axes,
                              const std::vector<std::string>& order);

// One axis per physical dimension, named after it (x, y, z, nvlink, ib, dcn).
[[nodiscard]] Mesh physical_mesh(const Cluster& cluster);

// Where a group of axes sits on one physical dimension.
struct GroupDim {
    int dim = 0;
    std::int64_t extent = 1;
    std::int64_t stride = 1;
};
// The physical footprint of a collective over `axis_names` (InputError naming `flag` for an
// unknown axis), innermost dimension first.
[[nodiscard]] std::vector<GroupDim> group_footprint(const Mesh& mesh, const std::vector<std::string>& axis_names,
                                                    const std::string& flag);

}  // namespace ridgeline
