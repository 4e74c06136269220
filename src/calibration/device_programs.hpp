#pragma once
// What each device runs during a calibration step, written once over Comm so that the CPU
// (threads) and MPI (ranks) backends time exactly the same work. Each program allocates only
// this device's shard, repeats its body, and returns the group's time for one repetition: the
// fastest repetition, where a repetition lasts as long as its slowest device.
#include <cstdint>
#include <functional>

#include "calibration/backend.hpp"
#include "calibration/comm.hpp"
#include "calibration/sharded_case.hpp"
#include "collective/collective.hpp"

namespace ridgeline::calibration {

struct Repeat {
    int min_reps = 3;
    int max_reps = 60;
    double target_s = 0.05;  // stop repeating once this much time was spent (after min_reps)
    // Bytes each device writes between repetitions, untimed: every repetition then finds its
    // operands in memory rather than in a cache the previous one warmed, as in a training step.
    double evict_bytes = 0;
};

[[nodiscard]] double gemm_program(Comm& comm, std::int64_t m, std::int64_t k, std::int64_t n, const Repeat& repeat);
// Copies `bytes` from one buffer to another (reads and writes `bytes` each).
[[nodiscard]] double copy_program(Comm& comm, double bytes, const Repeat& repeat);
// `bytes` in collective_cost's convention (see collective.hpp).
[[nodiscard]] double collective_program(Comm& comm, CollectiveKind kind, double bytes, const Repeat& repeat);
[[nodiscard]] double sharded_program(Comm& comm, const ShardedCase& c, const Repeat& repeat);

// A backend whose devices run these programs over a Comm (cpu threads, MPI ranks): only how a
// group of devices is started differs between them.
class ProgramBackend : public Backend {
public:
    explicit ProgramBackend(const Repeat& repeat) : repeat_(repeat) {}
    double gemm_s(std::int64_t m, std::int64_t k, std::int64_t n) override {
        return run(devices(), [&](Comm& comm) { return gemm_program(comm, m, k, n, repeat_); });
    }
    double copy_s(double bytes) override {
        return run(devices(), [&](Comm& comm) { return copy_program(comm, bytes, repeat_); });
    }
    double collective_s(CollectiveKind kind, double bytes) override {
        return run(devices(), [&](Comm& comm) { return collective_program(comm, kind, bytes, repeat_); });
    }
    double sharded_s(const ShardedCase& c) override {
        return run(c.devices, [&](Comm& comm) { return sharded_program(comm, c, repeat_); });
    }

protected:
    // Runs `program` on every device, in replicas of `group_size` devices (as data parallelism runs
    // them: a case on fewer devices than the run has still sees busy neighbours, as the fitting
    // steps did), replicas starting each repetition together (ReplicaComm); the group's time.
    [[nodiscard]] virtual double run(int group_size, const std::function<double(Comm&)>& program) const = 0;

private:
    Repeat repeat_;
};

}  // namespace ridgeline::calibration
