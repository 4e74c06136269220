#pragma once
// Sharded arrays in the GSPMD sense: each array dimension is split over zero or more named mesh
// axes (A[I_XY, J] splits I over X and Y and keeps J whole); the array is replicated over the
// mesh axes it does not name.
#include <string>
#include <vector>

#include "mesh/mesh.hpp"

namespace ridgeline {

struct ShardedArray {
    std::vector<double> shape;
    double bytes_per_element = 2;
    std::vector<std::vector<std::string>> spec;  // per dimension: the mesh axes splitting it
};

[[nodiscard]] double array_bytes(const ShardedArray& array);
// Bytes one device holds. InputError naming `origin` if an axis is not in the mesh, is used
// twice, or does not divide its dimension.
[[nodiscard]] double local_bytes(const ShardedArray& array, const std::vector<MeshAxis>& mesh, const std::string& origin);
// Bytes held across all devices of the mesh (replicas counted).
[[nodiscard]] double total_bytes(const ShardedArray& array, const std::vector<MeshAxis>& mesh, const std::string& origin);

}  // namespace ridgeline
