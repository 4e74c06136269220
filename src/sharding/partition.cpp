#include "sharding/partition.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace ridgeline {

double array_bytes(const ShardedArray& array) {
    double elements = 1;
    for (double dim : array.shape) elements *= dim;
    return elements * array.bytes_per_element;
}

double local_bytes(const ShardedArray& array, const std::vector<MeshAxis>& mesh, const std::string& origin) {
    if (array.spec.size() > array.shape.size()) throw InputError(origin, "spec", "more entries than array dimensions");
    std::vector<std::string> used;
    double local = array_bytes(array);
    for (std::size_t dim = 0; dim < array.spec.size(); ++dim) {
        double shards = 1;
        for (const auto& name : array.spec[dim]) {
            const auto axis = std::find_if(mesh.begin(), mesh.end(), [&](const MeshAxis& a) { return a.name == name; });
            if (axis == mesh.end()) throw InputError(origin, name, "not an axis of the mesh");
            if (std::find(used.begin(), used.end(), name) != used.end())
                throw InputError(origin, name, "a mesh axis can split only one array dimension");
            used.push_back(name);
            shards *= static_cast<double>(axis->size);
        }
        const double extent = array.shape[dim];
        if (std::fmod(extent, shards) != 0.0)
            throw InputError(origin, "spec[" + std::to_string(dim) + "]",
                             "dimension of " + std::to_string(static_cast<long long>(extent)) + " does not split into " +
                                 std::to_string(static_cast<long long>(shards)) + " shards");
        local /= shards;
    }
    return local;
}

double total_bytes(const ShardedArray& array, const std::vector<MeshAxis>& mesh, const std::string& origin) {
    double devices = 1;
    for (const auto& axis : mesh) devices *= static_cast<double>(axis.size);
    return local_bytes(array, mesh, origin) * devices;
}

}  // namespace ridgeline
