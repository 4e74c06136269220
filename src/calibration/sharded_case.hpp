#pragma once
// The sharded matmuls a calibration run times and predicts: the four cases of a sharded matmul
// (GSPMD's, as in DESIGN.md) and a tensor-parallel MLP block, each as the work one device does.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collective/collective.hpp"

namespace ridgeline::calibration {

enum class ShardedKind {
    local,                   // X[m/N, k] . W[k, n]: contraction unsharded, no communication
    gather_contraction,      // X[m, k/N]: one side's contraction sharded -> AllGather X, then local
    reduce_scatter_partial,  // X[m, k/N] . W[k/N, n]: both sharded -> partial sums, ReduceScatter
    all_reduce_partial,      // the same, AllReduce of the partial sums
    gather_weights,          // X[m/N, k] . W[k, n/N]: both non-contracting dims on one axis -> AllGather W
    tp_mlp,                  // X[m/N, k] -AllGather-> . W1[k, f/N] . W2[f/N, k] -ReduceScatter-> [m/N, k]
};

[[nodiscard]] const char* sharded_kind_name(ShardedKind kind);
[[nodiscard]] std::optional<ShardedKind> parse_sharded_kind(std::string_view text);

struct ShardedCase {
    ShardedKind kind = ShardedKind::local;
    std::int64_t m = 0, k = 0, n = 0;
    std::int64_t f = 0;  // tp_mlp only: the hidden width
    int devices = 1;
    [[nodiscard]] std::string name() const;  // "gather_weights m=64 k=1024 n=2048 x2"
};

// What one device runs for a case, in order: GEMMs [m, k] x [k, n] and collectives whose bytes
// follow collective_cost's convention (gathered output, unreduced input).
struct DeviceGemm {
    double m = 0, k = 0, n = 0;
};
struct DeviceCollective {
    CollectiveKind kind = CollectiveKind::all_gather;
    double bytes = 0;
};
struct CaseWork {
    std::vector<DeviceGemm> gemms;
    std::vector<DeviceCollective> collectives;  // none on one device
};

// InputError (naming "case") when the dimensions do not divide by the device count.
[[nodiscard]] CaseWork case_work(const ShardedCase& c);

}  // namespace ridgeline::calibration
