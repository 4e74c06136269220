// The cuda backend: one GPU per device, cuBLAS GEMMs and NCCL collectives, driven from one
// process. Built only where CMake finds the CUDA toolkit and NCCL; where no GPU is present,
// asking for it is an InputError, never a crash. Sharded cases are not implemented here (yet).
#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "calibration/backend.hpp"
#include "core/error.hpp"

namespace ridgeline::calibration {

namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
void check(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
}
void check(ncclResult_t status, const char* what) {
    if (status != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
}

// Device memory of one GPU, freed on scope exit.
class DeviceBuffer {
public:
    DeviceBuffer(int device, std::size_t bytes) : device_(device) {
        check(cudaSetDevice(device), "cudaSetDevice");
        check(cudaMalloc(&data_, std::max<std::size_t>(bytes, 4)), "cudaMalloc");
        check(cudaMemset(data_, 0, std::max<std::size_t>(bytes, 4)), "cudaMemset");
    }
    ~DeviceBuffer() {
        (void)cudaSetDevice(device_);
        (void)cudaFree(data_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    [[nodiscard]] float* get() const { return static_cast<float*>(data_); }

private:
    int device_;
    void* data_ = nullptr;
};

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(int devices) : devices_(devices), comms_(static_cast<std::size_t>(devices)) {
        std::vector<int> list(static_cast<std::size_t>(devices));
        for (int i = 0; i < devices; ++i) list[i] = i;
        check(ncclCommInitAll(comms_.data(), devices, list.data()), "ncclCommInitAll");
        for (int i = 0; i < devices; ++i) {
            check(cudaSetDevice(i), "cudaSetDevice");
            cudaStream_t stream = nullptr;
            check(cudaStreamCreate(&stream), "cudaStreamCreate");
            streams_.push_back(stream);
            cublasHandle_t handle = nullptr;
            check(cublasCreate(&handle), "cublasCreate");
            check(cublasSetStream(handle, stream), "cublasSetStream");
            handles_.push_back(handle);
        }
    }
    ~CudaBackend() override {
        for (auto handle : handles_) (void)cublasDestroy(handle);
        for (auto stream : streams_) (void)cudaStreamDestroy(stream);
        for (auto comm : comms_) (void)ncclCommDestroy(comm);
    }
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    [[nodiscard]] std::string name() const override { return "cuda"; }
    [[nodiscard]] int devices() const override { return devices_; }
    [[nodiscard]] std::string libraries() const override {
        int nccl = 0, runtime = 0;
        (void)ncclGetVersion(&nccl);
        (void)cudaRuntimeGetVersion(&runtime);
        return "CUDA runtime " + std::to_string(runtime) + ", cuBLAS, NCCL " + std::to_string(nccl);
    }
    double gemm_s(std::int64_t m, std::int64_t k, std::int64_t n) override {
        std::vector<std::unique_ptr<DeviceBuffer>> a, b, c;
        for (int i = 0; i < devices_; ++i) {
            a.push_back(std::make_unique<DeviceBuffer>(i, static_cast<std::size_t>(m * k) * 4));
            b.push_back(std::make_unique<DeviceBuffer>(i, static_cast<std::size_t>(k * n) * 4));
            c.push_back(std::make_unique<DeviceBuffer>(i, static_cast<std::size_t>(m * n) * 4));
        }
        const float one = 1.0f, zero = 0.0f;
        return timed([&] {
            for (int i = 0; i < devices_; ++i) {
                check(cudaSetDevice(i), "cudaSetDevice");
                check(cublasSgemm(handles_[i], CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n),
                                  static_cast<int>(k), &one, a[i]->get(), static_cast<int>(m), b[i]->get(),
                                  static_cast<int>(k), &zero, c[i]->get(), static_cast<int>(m)),
                      "cublasSgemm");
            }
        });
    }
    double copy_s(double bytes) override {
        const auto size = static_cast<std::size_t>(bytes);
        std::vector<std::unique_ptr<DeviceBuffer>> from, to;
        for (int i = 0; i < devices_; ++i) {
            from.push_back(std::make_unique<DeviceBuffer>(i, size));
            to.push_back(std::make_unique<DeviceBuffer>(i, size));
        }
        return timed([&] {
            for (int i = 0; i < devices_; ++i) {
                check(cudaSetDevice(i), "cudaSetDevice");
                check(cudaMemcpyAsync(to[i]->get(), from[i]->get(), size, cudaMemcpyDeviceToDevice, streams_[i]), "cudaMemcpyAsync");
            }
        });
    }
    double collective_s(CollectiveKind kind, double bytes) override {
        const auto p = static_cast<std::size_t>(devices_);
        const std::size_t total = std::max<std::size_t>(1, static_cast<std::size_t>(bytes / 4.0) / (p * p)) * p * p;
        std::vector<std::unique_ptr<DeviceBuffer>> in, out;
        for (int i = 0; i < devices_; ++i) {
            in.push_back(std::make_unique<DeviceBuffer>(i, total * 4));
            out.push_back(std::make_unique<DeviceBuffer>(i, total * 4));
        }
        return timed([&] {
            check(ncclGroupStart(), "ncclGroupStart");
            for (int i = 0; i < devices_; ++i) {
                float* send = in[i]->get();
                float* recv = out[i]->get();
                switch (kind) {
                    case CollectiveKind::all_gather:
                        check(ncclAllGather(send, recv, total / p, ncclFloat, comms_[i], streams_[i]), "ncclAllGather");
                        break;
                    case CollectiveKind::reduce_scatter:
                        check(ncclReduceScatter(send, recv, total / p, ncclFloat, ncclSum, comms_[i], streams_[i]), "ncclReduceScatter");
                        break;
                    case CollectiveKind::all_reduce:
                        check(ncclAllReduce(send, recv, total, ncclFloat, ncclSum, comms_[i], streams_[i]), "ncclAllReduce");
                        break;
                    case CollectiveKind::all_to_all:  // as grouped sends and receives, one block per peer
                        for (std::size_t j = 0; j < p; ++j) {
                            const std::size_t block = total / (p * p);
                            check(ncclSend(send + j * block, block, ncclFloat, static_cast<int>(j), comms_[i], streams_[i]), "ncclSend");
                            check(ncclRecv(recv + j * block, block, ncclFloat, static_cast<int>(j), comms_[i], streams_[i]), "ncclRecv");
                        }
                        break;
                    case CollectiveKind::permute:
                    case CollectiveKind::broadcast: {
                        const int next = (i + 1) % devices_, previous = (i + devices_ - 1) % devices_;
                        check(ncclSend(send, total, ncclFloat, next, comms_[i], streams_[i]), "ncclSend");
                        check(ncclRecv(recv, total, ncclFloat, previous, comms_[i], streams_[i]), "ncclRecv");
                        break;
                    }
                }
            }
            check(ncclGroupEnd(), "ncclGroupEnd");
        });
    }
    double sharded_s(const ShardedCase&) override {
        throw InputError(kRequest, "validate", "the cuda backend times GEMMs, copies and collectives; sharded cases run on the cpu and mpi backends");
    }

private:
    // Launches on every GPU, waits for all; the fastest of a few repetitions after a warm-up.
    template <class Launch>
    double timed(Launch&& launch) {
        const auto sync = [&] {
            for (int i = 0; i < devices_; ++i) {
                check(cudaSetDevice(i), "cudaSetDevice");
                check(cudaStreamSynchronize(streams_[i]), "cudaStreamSynchronize");
            }
        };
        launch();
        sync();
        double best = std::numeric_limits<double>::infinity();
        for (int rep = 0; rep < 10; ++rep) {
            const auto start = std::chrono::steady_clock::now();
            launch();
            sync();
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        return best;
    }
    int devices_;
    std::vector<ncclComm_t> comms_;
    std::vector<cudaStream_t> streams_;
    std::vector<cublasHandle_t> handles_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendRequest& request) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0)
        throw InputError(kRequest, "backend", std::string("cuda: no GPU on this host (") +
                                              (status != cudaSuccess ? cudaGetErrorString(status) : "0 devices") + ")");
    if (request.devices > count)
        throw InputError(kRequest, "devices", std::to_string(request.devices) + " devices but this host has " +
                                              std::to_string(count) + " GPUs");
    return std::make_unique<CudaBackend>(request.devices);
}

}  // namespace ridgeline::calibration
