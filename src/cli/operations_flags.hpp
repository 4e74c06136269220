#pragma once
// Flags that override a system's operations data (failure rate, restart, checkpoint storage,
// host power, PUE) for the goodput and energy of a run; shared by `train` and `search train`.
#include "cli/commands.hpp"
#include "engine/run_outlook.hpp"

namespace ridgeline::cli {

struct OperationsFlags {
    double failures_per_chip_hour = 0, restart_s = 0, write_Bps = 0, interval_s = 0, host_w = 0, pue = 0;
};

// Host power and PUE: what energy needs (serve).
void add_power_flags(CLI::App& command, OperationsFlags& flags);
// Those and the failure, restart and checkpoint inputs of goodput (train, search train).
void add_operations_flags(CLI::App& command, OperationsFlags& flags);

// Only the flags defined and given on the command line override the system's values.
[[nodiscard]] OperationsOverrides operations_overrides(const CLI::App& command, const OperationsFlags& flags);

}  // namespace ridgeline::cli
