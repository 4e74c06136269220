#include "calibration/backend.hpp"

#include "core/error.hpp"

namespace ridgeline::calibration {

double Backend::tensor_gemm_s(Dtype dtype, std::int64_t, std::int64_t, std::int64_t) {
    throw InputError(kRequest, "backend", "the " + name() + " backend runs no " + std::string(dtype_name(dtype)) + " tensor-core GEMMs");
}

std::unique_ptr<Backend> make_backend(const BackendRequest& request) {
    if (request.devices < 1) throw InputError(kRequest, "devices", "expected at least 1 device");
    if (request.name == "cpu") return make_cpu_backend(request);
    if (request.name == "mpi") {
#ifdef RIDGELINE_HAVE_MPI
        return make_mpi_backend(request);
#else
        throw InputError(kRequest, "backend", "this ridgeline was built without MPI (CMake found no MPI); use backend cpu");
#endif
    }
    if (request.name == "cuda") {
#ifdef RIDGELINE_HAVE_CUDA
        return make_cuda_backend(request);
#else
        throw InputError(kRequest, "backend", "this ridgeline was built without CUDA and NCCL; use backend cpu");
#endif
    }
    throw InputError(kRequest, "backend", "unknown backend \"" + request.name + "\" (known: cpu, mpi, cuda)");
}

}  // namespace ridgeline::calibration
