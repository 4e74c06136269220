#pragma once
// What each device runs during a calibration step, written once over Comm so that the CPU
// (threads) and MPI (ranks) backends time exactly the same work. Each program allocates only
// this device's shard, repeats its body, and returns the group's time for one repetition: the
// fastest repetition, where a repetition lasts as long as its slowest device.
#include <cstdint>

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

}  // namespace ridgeline::calibration
