// The cpu backend: one worker thread per device, pinned to its own core, each holding only its
// shard; collectives are the shared-memory rings of shm_comm.hpp.
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include "calibration/backend.hpp"
#include "calibration/device_programs.hpp"
#include "calibration/kernels.hpp"
#include "calibration/shm_comm.hpp"
#include "core/error.hpp"

namespace ridgeline::calibration {

namespace {

void pin_to_core(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort: timing only
}

class CpuBackend final : public ProgramBackend {
public:
    CpuBackend(int devices, double timeout_s, const Repeat& repeat)
        : ProgramBackend(repeat), devices_(devices), timeout_s_(timeout_s) {}
    [[nodiscard]] std::string name() const override { return "cpu"; }
    [[nodiscard]] int devices() const override { return devices_; }
    [[nodiscard]] std::string libraries() const override { return gemm_library() + ", shared-memory rings"; }

private:
    // A failure breaks the groups and is rethrown here; replica 0 times.
    double run(int group_size, const std::function<double(Comm&)>& program) const override {
        const auto timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
        const int replicas = devices_ / group_size, devices = replicas * group_size;
        ShmGroup host(devices, timeout);
        std::vector<std::unique_ptr<ShmGroup>> groups;
        for (int g = 0; g < replicas && replicas > 1; ++g) groups.push_back(std::make_unique<ShmGroup>(group_size, timeout));
        std::vector<double> results(static_cast<std::size_t>(devices), 0.0);
        std::vector<std::exception_ptr> errors(static_cast<std::size_t>(devices));
        std::vector<std::thread> threads;
        for (int device = 0; device < devices; ++device) {
            threads.emplace_back([&, device] {
                pin_to_core(device);
                const auto at = static_cast<std::size_t>(device);
                try {
                    ShmComm everyone(host, device);
                    if (groups.empty()) {
                        results[at] = program(everyone);
                    } else {
                        ShmComm mine(*groups[static_cast<std::size_t>(device / group_size)], device % group_size);
                        ReplicaComm comm(mine, everyone);
                        results[at] = program(comm);
                    }
                } catch (...) {
                    errors[at] = std::current_exception();
                    host.break_group();
                    for (auto& group : groups) group->break_group();
                }
            });
        }
        for (auto& thread : threads) thread.join();
        // The failure itself, rather than the others' reports of an abandoned collective.
        for (const auto& error : errors) {
            if (!error) continue;
            try {
                std::rethrow_exception(error);
            } catch (const CollectiveTimeout&) {
            }
        }
        for (const auto& error : errors)
            if (error) std::rethrow_exception(error);
        return results[0];
    }
    int devices_;
    double timeout_s_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const BackendRequest& request) {
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (request.devices > cores)
        throw InputError(kRequest, "devices", std::to_string(request.devices) + " devices but this host has " +
                                              std::to_string(cores) + " cores (the cpu backend runs one device per core)");
    return std::make_unique<CpuBackend>(request.devices, request.collective_timeout_s,
                                        Repeat{3, 60, request.repeat_target_s, request.evict_bytes});
}

}  // namespace ridgeline::calibration
