// The cuda backend: one GPU per device, driven from one process. It measures what LLMs run:
// cuBLASLt tensor-core GEMMs in bf16 and fp8 (e4m3 inputs with scales, a bf16 output, fast accumulation) on random
// data, each timed with CUDA events on a cold L2 (a write of twice its size before every
// sample), the median of the samples; device-to-device copies; NCCL collectives. The device's own
// memory, L2, SM count and clock go into the provenance. Built only where CMake finds the CUDA
// toolkit and NCCL; where no GPU is present, asking for it is an InputError, never a crash.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <nccl.h>

#include "calibration/backend.hpp"
#include "calibration/cublaslt_library.hpp"
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
    DeviceBuffer(int device, std::size_t bytes) : device_(device), bytes_(std::max<std::size_t>(bytes, 16)) {
        check(cudaSetDevice(device), "cudaSetDevice");
        check(cudaMalloc(&data_, bytes_), "cudaMalloc");
    }
    ~DeviceBuffer() {
        (void)cudaSetDevice(device_);
        (void)cudaFree(data_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    [[nodiscard]] void* get() const { return data_; }
    [[nodiscard]] std::size_t bytes() const { return bytes_; }

private:
    int device_;
    std::size_t bytes_;
    void* data_ = nullptr;
};

// Bytes of random finite values of `dtype`, small enough that no GEMM overflows: fp32 and bf16
// uniform in [-1, 1), fp8 e4m3 of magnitude 1/8 .. 2 with either sign.
std::vector<std::uint8_t> random_bytes(Dtype dtype, std::size_t bytes, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
    std::vector<std::uint8_t> out(bytes);
    if (dtype == Dtype::fp8) {
        for (auto& b : out) {
            const auto r = engine();
            b = static_cast<std::uint8_t>(((r & 1U) << 7) | ((4 + (r >> 1) % 5) << 3) | ((r >> 8) & 7U));
        }
        return out;
    }
    const std::size_t width = dtype == Dtype::fp32 ? 4 : 2;
    for (std::size_t i = 0; i + width <= bytes; i += width) {
        const float value = uniform(engine);
        std::uint32_t bits = 0;
        std::memcpy(&bits, &value, 4);
        if (width == 2) bits >>= 16;  // bf16: the top half of an fp32
        std::memcpy(out.data() + i, &bits, width);
    }
    return out;
}

cudaDataType_t cuda_type(Dtype dtype) {
    switch (dtype) {
        case Dtype::fp32: return CUDA_R_32F;
        case Dtype::bf16: return CUDA_R_16BF;
        case Dtype::fp8: return CUDA_R_8F_E4M3;
        default: throw std::logic_error("cuda backend: no GEMM in this dtype");
    }
}

// One cuBLASLt GEMM, planned once: D[m, n] = A[m, k] B[k, n] in the "TN" layout cuBLASLt's fp8
// kernels require (A and B stored k-major), fp32 accumulation; fp8 writes bf16.
class LtGemm {
public:
    LtGemm(cublasLtHandle_t handle, int device, Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n, const DeviceBuffer& pool,
           const DeviceBuffer& unit_scale, const DeviceBuffer& workspace, cudaStream_t stream)
        : handle_(handle), workspace_(workspace), stream_(stream) {
        const Dtype output = dtype == Dtype::fp32 ? Dtype::fp32 : Dtype::bf16;
        const auto in_width = static_cast<std::size_t>(bytes_per_element(dtype));
        const auto out_width = static_cast<std::size_t>(bytes_per_element(output));
        const auto um = static_cast<std::size_t>(m), uk = static_cast<std::size_t>(k), un = static_cast<std::size_t>(n);
        a_ = std::make_unique<DeviceBuffer>(device, um * uk * in_width);
        b_ = std::make_unique<DeviceBuffer>(device, uk * un * in_width);
        d_ = std::make_unique<DeviceBuffer>(device, um * un * out_width);
        fill(*a_, pool);
        fill(*b_, pool);
        check(cublaslt().cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
        const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
        check(cublaslt().cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose), "TRANSA");
        check(cublaslt().cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none), "TRANSB");
        if (dtype == Dtype::fp8) {
            // The kernel model's fp8 rate is the fast-accumulating one (as the H100 reference took the
            // faster of the two); backward GEMMs' split accumulation is the chip's fp8_split_accumulation.
            const std::int8_t fast_accumulation = 1;
            check(cublaslt().cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accumulation,
                                                            sizeof fast_accumulation),
                  "FAST_ACCUM");
            const void* scale = unit_scale.get();
            check(cublaslt().cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof scale), "A_SCALE_POINTER");
            check(cublaslt().cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale, sizeof scale), "B_SCALE_POINTER");
        }
        check(cublaslt().cublasLtMatrixLayoutCreate(&a_layout_, cuda_type(dtype), uk, um, k), "layout A");
        check(cublaslt().cublasLtMatrixLayoutCreate(&b_layout_, cuda_type(dtype), uk, un, k), "layout B");
        check(cublaslt().cublasLtMatrixLayoutCreate(&d_layout_, cuda_type(output), um, un, m), "layout D");
        cublasLtMatmulPreference_t preference = nullptr;
        check(cublaslt().cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
        const std::size_t workspace_bytes = workspace.bytes();
        check(cublaslt().cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                   sizeof workspace_bytes),
              "MAX_WORKSPACE_BYTES");
        int found = 0;
        const cublasStatus_t status =
            cublaslt().cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_layout_, b_layout_, d_layout_, d_layout_, preference, 1, &heuristic_, &found);
        (void)cublaslt().cublasLtMatmulPreferenceDestroy(preference);
        if (status != CUBLAS_STATUS_SUCCESS || found == 0)
            throw std::runtime_error("cuBLASLt has no " + std::string(dtype_name(dtype)) + " GEMM for " + std::to_string(m) + "x" +
                                     std::to_string(k) + "x" + std::to_string(n) + " on this GPU");
    }
    ~LtGemm() {
        (void)cublaslt().cublasLtMatrixLayoutDestroy(a_layout_);
        (void)cublaslt().cublasLtMatrixLayoutDestroy(b_layout_);
        (void)cublaslt().cublasLtMatrixLayoutDestroy(d_layout_);
        (void)cublaslt().cublasLtMatmulDescDestroy(desc_);
    }
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;

    void launch() const {
        const float one = 1.0F, zero = 0.0F;
        check(cublaslt().cublasLtMatmul(handle_, desc_, &one, a_->get(), a_layout_, b_->get(), b_layout_, &zero, d_->get(), d_layout_, d_->get(),
                             d_layout_, &heuristic_.algo, workspace_.get(), workspace_.bytes(), stream_),
              "cublasLtMatmul");
    }

private:
    // Operands tile the device's random pool (random data without a host round trip per shape).
    void fill(const DeviceBuffer& to, const DeviceBuffer& pool) const {
        for (std::size_t at = 0; at < to.bytes(); at += pool.bytes())
            check(cudaMemcpyAsync(static_cast<char*>(to.get()) + at, pool.get(), std::min(pool.bytes(), to.bytes() - at),
                                  cudaMemcpyDeviceToDevice, stream_),
                  "cudaMemcpyAsync");
    }

    cublasLtHandle_t handle_;
    const DeviceBuffer& workspace_;
    cudaStream_t stream_;
    std::unique_ptr<DeviceBuffer> a_, b_, d_;
    cublasLtMatmulDesc_t desc_ = nullptr;
    cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
    cublasLtMatmulHeuristicResult_t heuristic_{};
};

constexpr std::size_t kPoolBytes = std::size_t{64} << 20;
constexpr std::size_t kWorkspaceBytes = std::size_t{64} << 20;  // cuBLASLt's largest recommendation on Hopper

// What one GPU holds for the whole run.
struct Device {
    int index = 0;
    cudaStream_t stream = nullptr;
    cublasLtHandle_t lt = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    std::unique_ptr<DeviceBuffer> flush, workspace, unit_scale;
    std::vector<std::unique_ptr<DeviceBuffer>> pools;  // per dtype index, random
};

class CudaBackend final : public Backend {
public:
    CudaBackend(int devices, double repeat_target_s) : repeat_target_s_(repeat_target_s), comms_(static_cast<std::size_t>(devices)) {
        std::vector<int> list(static_cast<std::size_t>(devices));
        for (int i = 0; i < devices; ++i) list[static_cast<std::size_t>(i)] = i;
        if (devices > 1) check(ncclCommInitAll(comms_.data(), devices, list.data()), "ncclCommInitAll");
        for (int i = 0; i < devices; ++i) {
            auto d = std::make_unique<Device>();
            d->index = i;
            check(cudaSetDevice(i), "cudaSetDevice");
            check(cudaStreamCreate(&d->stream), "cudaStreamCreate");
            check(cublaslt().cublasLtCreate(&d->lt), "cublasLtCreate");
            check(cudaEventCreate(&d->start), "cudaEventCreate");
            check(cudaEventCreate(&d->stop), "cudaEventCreate");
            int l2 = 0;
            check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, i), "L2 size");
            d->flush = std::make_unique<DeviceBuffer>(i, 2 * static_cast<std::size_t>(std::max(l2, 1 << 20)));
            d->workspace = std::make_unique<DeviceBuffer>(i, kWorkspaceBytes);
            d->unit_scale = std::make_unique<DeviceBuffer>(i, sizeof(float));
            const float one = 1.0F;
            check(cudaMemcpy(d->unit_scale->get(), &one, sizeof one, cudaMemcpyHostToDevice), "cudaMemcpy");
            d->pools.resize(kDtypeCount);
            for (Dtype dtype : {Dtype::fp32, Dtype::bf16, Dtype::fp8}) {
                auto pool = std::make_unique<DeviceBuffer>(i, kPoolBytes);
                const auto bytes = random_bytes(dtype, kPoolBytes, 1000 * static_cast<std::uint64_t>(i) + index_of(dtype));
                check(cudaMemcpy(pool->get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
                d->pools[index_of(dtype)] = std::move(pool);
            }
            devices_.push_back(std::move(d));
        }
    }
    ~CudaBackend() override {
        for (auto& d : devices_) {
            (void)cudaSetDevice(d->index);
            (void)cudaEventDestroy(d->start);
            (void)cudaEventDestroy(d->stop);
            (void)cublaslt().cublasLtDestroy(d->lt);
            (void)cudaStreamDestroy(d->stream);
        }
        for (auto comm : comms_)
            if (comm) (void)ncclCommDestroy(comm);
    }
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    [[nodiscard]] std::string name() const override { return "cuda"; }
    [[nodiscard]] int devices() const override { return static_cast<int>(devices_.size()); }
    [[nodiscard]] std::string libraries() const override {
        int nccl = 0, runtime = 0;
        (void)ncclGetVersion(&nccl);
        (void)cudaRuntimeGetVersion(&runtime);
        return "CUDA runtime " + std::to_string(runtime) + ", cuBLASLt " + std::to_string(cublaslt().cublasLtGetVersion()) + ", NCCL " +
               std::to_string(nccl);
    }
    void describe(Provenance& p) const override {
        cudaDeviceProp prop{};
        check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
        int clock_khz = 0;
        (void)cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
        p.device = std::string(prop.name) + " (" + std::to_string(prop.multiProcessorCount) + " SMs, " +
                   std::to_string(prop.l2CacheSize >> 20) + " MiB L2, " + std::to_string(clock_khz / 1000) + " MHz peak clock, compute " +
                   std::to_string(prop.major) + "." + std::to_string(prop.minor) + ")";
        p.memory_bytes = static_cast<double>(prop.totalGlobalMem);
        p.cache_bytes = static_cast<double>(prop.l2CacheSize);
    }

    double gemm_s(std::int64_t m, std::int64_t k, std::int64_t n) override {
        std::vector<std::unique_ptr<LtGemm>> gemms;
        for (auto& d : devices_) gemms.push_back(make_gemm(*d, Dtype::fp32, m, k, n));
        return timed(devices(), [&] {
            for (std::size_t i = 0; i < gemms.size(); ++i) gemms[i]->launch();
        });
    }
    [[nodiscard]] std::vector<Dtype> tensor_dtypes() const override { return {Dtype::bf16, Dtype::fp8}; }
    double tensor_gemm_s(Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n) override {
        const auto gemm = make_gemm(*devices_.front(), dtype, m, k, n);
        return timed(1, [&] { gemm->launch(); });
    }
    double copy_s(double bytes) override {
        const auto size = static_cast<std::size_t>(bytes);
        std::vector<std::unique_ptr<DeviceBuffer>> from, to;
        for (auto& d : devices_) {
            from.push_back(std::make_unique<DeviceBuffer>(d->index, size));
            to.push_back(std::make_unique<DeviceBuffer>(d->index, size));
        }
        return timed(devices(), [&] {
            for (std::size_t i = 0; i < devices_.size(); ++i)
                check(cudaMemcpyAsync(to[i]->get(), from[i]->get(), size, cudaMemcpyDeviceToDevice, devices_[i]->stream), "cudaMemcpyAsync");
        });
    }
    double collective_s(CollectiveKind kind, double bytes) override {
        if (devices() < 2) throw InputError(kRequest, "devices", "collectives need at least 2 GPUs");
        const auto p = static_cast<std::size_t>(devices());
        const std::size_t total = std::max<std::size_t>(1, static_cast<std::size_t>(bytes / 4.0) / (p * p)) * p * p;
        std::vector<std::unique_ptr<DeviceBuffer>> in, out;
        for (auto& d : devices_) {
            in.push_back(std::make_unique<DeviceBuffer>(d->index, total * 4));
            out.push_back(std::make_unique<DeviceBuffer>(d->index, total * 4));
        }
        return timed(devices(), [&] {
            check(ncclGroupStart(), "ncclGroupStart");
            for (std::size_t i = 0; i < p; ++i) enqueue_collective(kind, i, total, static_cast<float*>(in[i]->get()), static_cast<float*>(out[i]->get()));
            check(ncclGroupEnd(), "ncclGroupEnd");
        });
    }
    double sharded_s(const ShardedCase&) override {
        throw InputError(kRequest, "validate", "the cuda backend validates a kernel model (fit --like CHIP); sharded cases run on the cpu and mpi backends");
    }

private:
    std::unique_ptr<LtGemm> make_gemm(Device& d, Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n) const {
        check(cudaSetDevice(d.index), "cudaSetDevice");
        return std::make_unique<LtGemm>(d.lt, d.index, dtype, m, k, n, *d.pools[index_of(dtype)], *d.unit_scale, *d.workspace, d.stream);
    }

    void enqueue_collective(CollectiveKind kind, std::size_t i, std::size_t total, float* send, float* recv) {
        const auto p = static_cast<std::size_t>(devices());
        ncclComm_t comm = comms_[i];
        cudaStream_t stream = devices_[i]->stream;
        switch (kind) {
            case CollectiveKind::all_gather:
                check(ncclAllGather(send, recv, total / p, ncclFloat, comm, stream), "ncclAllGather");
                break;
            case CollectiveKind::reduce_scatter:
                check(ncclReduceScatter(send, recv, total / p, ncclFloat, ncclSum, comm, stream), "ncclReduceScatter");
                break;
            case CollectiveKind::all_reduce:
                check(ncclAllReduce(send, recv, total, ncclFloat, ncclSum, comm, stream), "ncclAllReduce");
                break;
            case CollectiveKind::all_to_all:  // grouped sends and receives, one block per peer
                for (std::size_t j = 0; j < p; ++j) {
                    const std::size_t block = total / (p * p);
                    check(ncclSend(send + j * block, block, ncclFloat, static_cast<int>(j), comm, stream), "ncclSend");
                    check(ncclRecv(recv + j * block, block, ncclFloat, static_cast<int>(j), comm, stream), "ncclRecv");
                }
                break;
            case CollectiveKind::permute:
            case CollectiveKind::broadcast: {
                const auto next = static_cast<int>((i + 1) % p), previous = static_cast<int>((i + p - 1) % p);
                check(ncclSend(send, total, ncclFloat, next, comm, stream), "ncclSend");
                check(ncclRecv(recv, total, ncclFloat, previous, comm, stream), "ncclRecv");
                break;
            }
        }
    }

    // `launch` enqueues the work on the first `on` devices' streams. Each sample: every device's L2
    // overwritten (the operands come from HBM, as in a layer of a step), events around the work on
    // each stream, the slowest device's time. Three warm-ups, then samples until the target time is
    // spent (at least 5, at most 50); the median.
    double timed(int on, const std::function<void()>& launch) {
        const auto count = static_cast<std::size_t>(on);
        const auto sample = [&](int index) {
            for (std::size_t i = 0; i < count; ++i) {
                Device& d = *devices_[i];
                check(cudaSetDevice(d.index), "cudaSetDevice");
                check(cudaMemsetAsync(d.flush->get(), index & 0xff, d.flush->bytes(), d.stream), "cudaMemsetAsync");
                check(cudaEventRecord(d.start, d.stream), "cudaEventRecord");
            }
            launch();
            for (std::size_t i = 0; i < count; ++i) check(cudaEventRecord(devices_[i]->stop, devices_[i]->stream), "cudaEventRecord");
            float slowest_ms = 0;
            for (std::size_t i = 0; i < count; ++i) {
                check(cudaEventSynchronize(devices_[i]->stop), "cudaEventSynchronize");
                float ms = 0;
                check(cudaEventElapsedTime(&ms, devices_[i]->start, devices_[i]->stop), "cudaEventElapsedTime");
                slowest_ms = std::max(slowest_ms, ms);
            }
            return 1e-3 * static_cast<double>(slowest_ms);
        };
        for (int i = 0; i < 3; ++i) (void)sample(i);
        std::vector<double> times;
        double spent_s = 0;
        while (times.size() < 5 || (times.size() < 50 && spent_s < repeat_target_s_)) {
            times.push_back(sample(static_cast<int>(times.size())));
            spent_s += times.back();
        }
        std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
        return times[times.size() / 2];
    }

    double repeat_target_s_;
    std::vector<ncclComm_t> comms_;
    std::vector<std::unique_ptr<Device>> devices_;
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
    (void)cublaslt();  // a missing cuBLASLt is refused before any device is touched
    return std::make_unique<CudaBackend>(request.devices, request.repeat_target_s);
}

}  // namespace ridgeline::calibration
