#pragma once
// Goodput: the wall-clock time a training run takes once failures and checkpoints are counted,
// not just its steps multiplied out. Failures arrive at a constant rate per chip-hour (the system's
// published figure); each costs a restart and, on average, half of the work since the last
// checkpoint; checkpoints block training while they write. The interval between checkpoints is
// Young and Daly's optimum unless one is given (Daly 2006, first order: sqrt(2 delta M) - delta).
#include <optional>

namespace ridgeline {

struct GoodputInputs {
    double useful_s = 0;               // the run's steps, multiplied out
    double chips = 0;
    double failures_per_chip_hour = 0;
    double restart_s = 0;              // detection, rescheduling and reloading the last checkpoint
    double checkpoint_bytes = 0;       // one copy of the training state
    double checkpoint_write_Bps = 0;   // all hosts together, as storage allows
    std::optional<double> checkpoint_interval_s;  // work between checkpoints; default: Young/Daly
};

struct GoodputReport {
    double mean_time_between_failures_s = 0;  // of the whole job
    double checkpoint_write_s = 0;
    double checkpoint_interval_s = 0;
    bool interval_given = false;
    double expected_failures = 0;
    double checkpointing_s = 0;  // blocked writing checkpoints
    double lost_work_s = 0;      // recomputed after failures
    double restarting_s = 0;
    // False when failures come faster than the job can recover from them: it never finishes.
    bool finishes = true;
    double wall_s = 0;           // useful + checkpointing + lost work + restarts (when it finishes)
    double goodput = 0;          // useful / wall, in (0, 1]; 0 when it never finishes
};

// InputError naming the field when an input is not finite or not positive.
[[nodiscard]] GoodputReport goodput(const GoodputInputs& in);

}  // namespace ridgeline
