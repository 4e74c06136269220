#include "mesh/mesh.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "io/quantity_text.hpp"
#include "mesh/plan_axes.hpp"

namespace ridgeline {

namespace {

// Innermost first: axes whose collectives move activations every layer come before those that
// move weights every layer, then gradients once per step; pipeline stages only pass one
// activation per micro-batch across their boundary, so they go outermost (as Megatron orders them).
int hunger_rank(const std::string& name) {
    static const std::vector<std::vector<std::string>> ranks = {
        {axis_name(PlanAxis::tensor), "tp", "model", "sequence", "sp"}, {axis_name(PlanAxis::expert), "ep"},
        {axis_name(PlanAxis::context), "cp"}, {axis_name(PlanAxis::fsdp), "zero"}, {axis_name(PlanAxis::data), "dp", "replica"},
        {axis_name(PlanAxis::pipeline), "pp", "stage"}};
    if (name.starts_with(expert_part_name(""))) return 1;  // part of an axis folded into expert ranks: beside them
    for (std::size_t r = 0; r < ranks.size(); ++r)
        if (std::find(ranks[r].begin(), ranks[r].end(), name) != ranks[r].end()) return static_cast<int>(r);
    return static_cast<int>(ranks.size());
}

}  // namespace

int Mesh::find(const std::string& name) const {
    for (std::size_t i = 0; i < axes.size(); ++i)
        if (axes[i].axis.name == name) return static_cast<int>(i);
    return -1;
}

std::int64_t Mesh::size() const {
    std::int64_t total = 1;
    for (const auto& placed : axes) total *= placed.axis.size;
    return total;
}

std::vector<MeshAxis> parse_mesh(const std::string& text, const std::string& flag) {
    std::vector<MeshAxis> axes;
    std::stringstream stream(text);
    std::string part;
    while (std::getline(stream, part, ',')) {
        const auto eq = part.find('=');
        if (eq == std::string::npos || eq == 0)
            throw InputError(flag, "", "expected name=size pairs such as data=8,tensor=4, found \"" + part + "\"");
        MeshAxis axis;
        axis.name = part.substr(0, eq);
        const std::string size_text = part.substr(eq + 1);
        const auto size = io::parse_positive_whole(size_text, 100'000'000);
        if (!size) throw InputError(flag, axis.name, "expected a positive whole size, found \"" + size_text + "\"");
        axis.size = *size;
        for (const auto& other : axes)
            if (other.name == axis.name) throw InputError(flag, axis.name, "axis named twice");
        axes.push_back(axis);
    }
    if (axes.empty()) throw InputError(flag, "", "expected at least one axis such as data=8");
    return axes;
}

Mesh place_mesh(const Cluster& cluster, const std::vector<MeshAxis>& axes, const std::vector<std::string>& order) {
    std::vector<MeshAxis> ordered = axes;
    if (order.empty()) {
        std::stable_sort(ordered.begin(), ordered.end(),
                         [](const MeshAxis& a, const MeshAxis& b) { return hunger_rank(a.name) < hunger_rank(b.name); });
    } else {
        if (order.size() != axes.size())
            throw InputError(kRequest, "placement", "list every mesh axis once, innermost first");
        ordered.clear();
        for (const auto& name : order) {
            const auto it = std::find_if(axes.begin(), axes.end(), [&](const MeshAxis& a) { return a.name == name; });
            if (it == axes.end()) throw InputError(kRequest, std::string("placement.") + name, "not an axis of the mesh");
            if (std::any_of(ordered.begin(), ordered.end(), [&](const MeshAxis& a) { return a.name == name; }))
                throw InputError(kRequest, std::string("placement.") + name, "axis named twice");
            ordered.push_back(*it);
        }
    }

    Mesh mesh;
    std::int64_t mesh_size = 1;
    for (const auto& axis : ordered) mesh_size *= axis.size;
    if (mesh_size != cluster.chips())
        throw InputError(kRequest, "mesh", "mesh has " + std::to_string(mesh_size) + " devices but the cluster has " +
                                           std::to_string(cluster.chips()) + " chips");

    std::size_t dim = 0;
    std::vector<std::int64_t> used(cluster.dims.size(), 1);  // positions already taken per dimension (as a stride)
    for (const auto& axis : ordered) {
        PlacedAxis placed{axis, {}};
        std::int64_t remaining = axis.size;
        while (remaining > 1) {
            while (dim < cluster.dims.size() && used[dim] == cluster.dims[dim].extent) ++dim;
            if (dim == cluster.dims.size()) break;
            const std::int64_t free_positions = cluster.dims[dim].extent / used[dim];
            if (free_positions % remaining == 0) {
                placed.spans.push_back({static_cast<int>(dim), remaining, used[dim]});
                used[dim] *= remaining;
                remaining = 1;
            } else if (remaining % free_positions == 0) {
                placed.spans.push_back({static_cast<int>(dim), free_positions, used[dim]});
                used[dim] = cluster.dims[dim].extent;
                remaining /= free_positions;
            } else {
                throw InputError(kRequest, std::string("mesh.") + axis.name, "size " + std::to_string(axis.size) +
                                                          " cannot be laid on the topology: dimension '" +
                                                          cluster.dims[dim].name + "' has " +
                                                          std::to_string(free_positions) + " positions left");
            }
        }
        mesh.axes.push_back(placed);
    }
    return mesh;
}

Mesh physical_mesh(const Cluster& cluster) {
    std::vector<MeshAxis> axes;
    std::vector<std::string> order;
    for (const auto& dim : cluster.dims) {
        axes.push_back({dim.name, dim.extent});
        order.push_back(dim.name);
    }
    return place_mesh(cluster, axes, order);
}

std::vector<GroupDim> group_footprint(const Mesh& mesh, const std::vector<std::string>& axis_names,
                                      const std::string& flag) {
    std::vector<GroupDim> footprint;
    if (axis_names.empty()) throw InputError(flag, "", "name at least one mesh axis");
    for (const auto& name : axis_names) {
        const int index = mesh.find(name);
        if (index < 0) {
            std::string known;
            for (const auto& placed : mesh.axes) known += (known.empty() ? "" : ", ") + placed.axis.name;
            throw InputError(flag, name, "not an axis of the mesh (axes: " + known + ")");
        }
        for (const AxisSpan& span : mesh.axes[static_cast<std::size_t>(index)].spans) {
            auto it = std::find_if(footprint.begin(), footprint.end(), [&](const GroupDim& g) { return g.dim == span.dim; });
            if (it == footprint.end()) {
                footprint.push_back({span.dim, span.extent, span.stride});
            } else {
                it->extent *= span.extent;
                it->stride = std::min(it->stride, span.stride);
            }
        }
    }
    std::sort(footprint.begin(), footprint.end(), [](const GroupDim& a, const GroupDim& b) { return a.dim < b.dim; });
    return footprint;
}

}  // namespace ridgeline
