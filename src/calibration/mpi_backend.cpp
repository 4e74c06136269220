// The mpi backend: one MPI rank per device (started by mpirun), real MPI collectives. Every rank
// runs the same sequence of steps; rank 0 alone prints and writes.
#include <chrono>
#include <cstdint>
#include <thread>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "calibration/backend.hpp"
#include "calibration/device_programs.hpp"
#include "calibration/kernels.hpp"
#include "core/error.hpp"

namespace ridgeline::calibration {

namespace {

int to_int(std::size_t count) { return static_cast<int>(count); }

class MpiComm final : public Comm {
public:
    explicit MpiComm(MPI_Comm comm) : comm_(comm) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }
    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return size_; }
    void barrier() override { MPI_Barrier(comm_); }
    [[nodiscard]] double max(double value) override {
        double largest = 0;
        MPI_Allreduce(&value, &largest, 1, MPI_DOUBLE, MPI_MAX, comm_);
        return largest;
    }
    void all_gather(const float* in, float* out, std::size_t count) override {
        if (in == out + static_cast<std::size_t>(rank_) * count)
            MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, to_int(count), MPI_FLOAT, comm_);
        else
            MPI_Allgather(in, to_int(count), MPI_FLOAT, out, to_int(count), MPI_FLOAT, comm_);
    }
    void reduce_scatter(float* data, float* out, std::size_t count) override {
        if (out >= data && out < data + count * static_cast<std::size_t>(size_)) {
            // MPI forbids aliasing: reduce in place (the result lands at the front), then move it.
            MPI_Reduce_scatter_block(MPI_IN_PLACE, data, to_int(count), MPI_FLOAT, MPI_SUM, comm_);
            if (out != data) std::memmove(out, data, count * sizeof(float));
        } else {
            MPI_Reduce_scatter_block(data, out, to_int(count), MPI_FLOAT, MPI_SUM, comm_);
        }
    }
    void all_reduce(float* data, std::size_t count) override {
        MPI_Allreduce(MPI_IN_PLACE, data, to_int(count), MPI_FLOAT, MPI_SUM, comm_);
    }
    void all_to_all(const float* in, float* out, std::size_t count) override {
        MPI_Alltoall(in, to_int(count), MPI_FLOAT, out, to_int(count), MPI_FLOAT, comm_);
    }
    void send_recv(const float* send, float* recv, std::size_t count) override {
        const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
        MPI_Sendrecv(send, to_int(count), MPI_FLOAT, next, 0, recv, to_int(count), MPI_FLOAT, previous, 0, comm_,
                     MPI_STATUS_IGNORE);
    }

private:
    MPI_Comm comm_;
    int rank_ = 0, size_ = 1;
};

// FNV-1a: enough to tell two command lines apart.
std::uint64_t fingerprint(const std::string& text) {
    std::uint64_t hash = 1469598103934665603ull;
    for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return hash;
}

class MpiBackend final : public ProgramBackend {
public:
    explicit MpiBackend(const BackendRequest& request)
        : ProgramBackend(Repeat{3, 60, request.repeat_target_s, request.evict_bytes}) {
        int initialized = 0;
        MPI_Initialized(&initialized);
        if (!initialized) MPI_Init(nullptr, nullptr);
        // Errors come back as codes, and every check below is collective: no rank is left waiting.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks_);

        // Rank 0's arguments are the reference; any rank that differs makes every rank refuse.
        std::uint64_t reference = fingerprint(request.arguments_fingerprint);
        MPI_Bcast(&reference, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        int mismatch = reference != fingerprint(request.arguments_fingerprint) ? 1 : 0;
        int any_mismatch = 0;
        MPI_Allreduce(&mismatch, &any_mismatch, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any_mismatch != 0) {
            finalize();
            throw InputError("mpirun", "arguments", "rank " + std::to_string(rank_) + ": the ranks were started with different arguments (" +
                                                        (mismatch ? std::string("this rank differs from rank 0") : std::string("another rank differs from rank 0")) + ")");
        }
        if (request.devices != ranks_) {
            finalize();
            throw InputError(kRequest, "devices", std::to_string(request.devices) + " devices but mpirun started " +
                                                  std::to_string(ranks_) + " ranks (the mpi backend runs one device per rank)");
        }
    }
    ~MpiBackend() override { finalize(); }
    MpiBackend(const MpiBackend&) = delete;
    MpiBackend& operator=(const MpiBackend&) = delete;

    [[nodiscard]] std::string name() const override { return "mpi"; }
    [[nodiscard]] int devices() const override { return ranks_; }
    [[nodiscard]] bool leader() const override { return rank_ == 0; }
    [[nodiscard]] bool agree(bool leader_value) override {
        int value = leader_value ? 1 : 0;
        MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
        return value != 0;
    }
    [[nodiscard]] std::string libraries() const override {
        std::vector<char> version(MPI_MAX_LIBRARY_VERSION_STRING, '\0');
        int length = 0;
        MPI_Get_library_version(version.data(), &length);
        std::string text(version.data(), static_cast<std::size_t>(length));
        if (const auto cut = text.find_first_of(",\n"); cut != std::string::npos) text.resize(cut);
        return gemm_library() + ", " + text;
    }

private:
    // Ranks beyond the last whole replica wait; every rank gets replica 0's time.
    double run(int group_size, const std::function<double(Comm&)>& program) const override {
        const int replicas = ranks_ / group_size;
        const bool taking_part = rank_ < replicas * group_size;
        MPI_Comm host = MPI_COMM_NULL, replica = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, taking_part ? 0 : MPI_UNDEFINED, rank_, &host);
        MPI_Comm_split(MPI_COMM_WORLD, taking_part ? rank_ / group_size : MPI_UNDEFINED, rank_, &replica);
        double time_s = 0;
        if (taking_part) {
            MpiComm everyone(host);
            MpiComm mine(replica);
            ReplicaComm comm(mine, everyone);
            time_s = replicas > 1 ? program(comm) : program(everyone);
            MPI_Comm_free(&replica);
            MPI_Comm_free(&host);
        }
        // Ranks left out of the group wait sleeping, not polling: on a host with few cores a
        // polling rank would take a core from the ranks being timed.
        MPI_Request request = MPI_REQUEST_NULL;
        MPI_Ibcast(&time_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
        for (int done = 0;;) {
            MPI_Test(&request, &done, MPI_STATUS_IGNORE);
            if (done) break;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return time_s;
    }
    void finalize() {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) MPI_Finalize();
    }
    int rank_ = 0, ranks_ = 1;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(const BackendRequest& request) { return std::make_unique<MpiBackend>(request); }

}  // namespace ridgeline::calibration
