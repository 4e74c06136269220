#pragma once
// A calibration backend executes on the hardware it runs on: GEMMs, memory copies, collectives,
// sharded matmuls and tensor-parallel MLP blocks across `devices()` devices, each holding only its
// shard. Every timing is the group's: the slowest device of the fastest repetition.
//   cpu:  one thread per device (at most one per core), Eigen GEMMs, shared-memory ring collectives
//   mpi:  one MPI rank per device (started by mpirun), MPI collectives        (built with MPI)
//   cuda: one GPU per device, cuBLAS GEMMs and NCCL collectives          (built with CUDA + NCCL)
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "calibration/measurements.hpp"
#include "calibration/sharded_case.hpp"
#include "collective/collective.hpp"

namespace ridgeline::calibration {

class Backend {
public:
    virtual ~Backend() = default;
    [[nodiscard]] virtual std::string name() const = 0;
    [[nodiscard]] virtual int devices() const = 0;
    // The one process that prints and writes files (MPI rank 0; always true elsewhere).
    [[nodiscard]] virtual bool leader() const { return true; }
    // Rank 0's value, on every rank (MPI); the value itself elsewhere. Keeps decisions that depend
    // on a clock (the time budget) the same on every rank, so that no rank waits for the others.
    [[nodiscard]] virtual bool agree(bool leader_value) { return leader_value; }
    // Names and versions of the libraries doing the work, for the provenance of measurements.
    [[nodiscard]] virtual std::string libraries() const = 0;
    // What the backend knows of its devices beyond the host: the accelerator's name, memory and cache.
    virtual void describe(Provenance& /*provenance*/) const {}
    // One [m, k] x [k, n] fp32 GEMM on every device at once.
    [[nodiscard]] virtual double gemm_s(std::int64_t m, std::int64_t k, std::int64_t n) = 0;
    // The dtypes of the tensor-core GEMMs the backend runs as LLMs do (none on cpu and mpi).
    [[nodiscard]] virtual std::vector<Dtype> tensor_dtypes() const { return {}; }
    // One [m, k] x [k, n] GEMM in `dtype` (fp8: fp8 inputs, a bf16 output) on the first device, on
    // random data, starting from a cold cache: the median time of one kernel.
    [[nodiscard]] virtual double tensor_gemm_s(Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n);
    // A copy of `bytes` within each device's memory (ordinary loads and stores), on every device at once.
    [[nodiscard]] virtual double copy_s(double bytes) = 0;
    // One collective over all devices; `bytes` as collective_cost counts them.
    [[nodiscard]] virtual double collective_s(CollectiveKind kind, double bytes) = 0;
    // A sharded matmul or MLP block over c.devices (at most devices()) devices; the other devices
    // run replicas of it meanwhile, so that every timing is taken on a host as busy as in fitting.
    [[nodiscard]] virtual double sharded_s(const ShardedCase& c) = 0;
};

struct BackendRequest {
    std::string name;                     // cpu, mpi, cuda
    int devices = 1;
    std::string arguments_fingerprint;    // the command line, compared across MPI ranks
    double collective_timeout_s = 60;
    double repeat_target_s = 0.2;         // time each step repeats for (the fastest repetition counts)
    double evict_bytes = 0;               // written between repetitions (see Repeat)
};

// InputError naming --backend or --devices for an unknown or unbuilt backend, more devices than
// cores, ranks or GPUs, or MPI ranks started with different arguments.
[[nodiscard]] std::unique_ptr<Backend> make_backend(const BackendRequest& request);

// Each backend, where built (the factory picks among them).
[[nodiscard]] std::unique_ptr<Backend> make_cpu_backend(const BackendRequest& request);
[[nodiscard]] std::unique_ptr<Backend> make_mpi_backend(const BackendRequest& request);
[[nodiscard]] std::unique_ptr<Backend> make_cuda_backend(const BackendRequest& request);

}  // namespace ridgeline::calibration
