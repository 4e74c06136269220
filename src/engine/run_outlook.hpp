#pragma once
// What a training run costs beyond its steps: the wall-clock time once failures and checkpoints
// are counted (goodput) and the energy it draws. Inputs come from the chip and system files
// (power, failure rate, restart time, storage, PUE), each overridable; the outlook says which
// input came from where, and why a part is missing when the files do not say enough.
#include <optional>
#include <string>
#include <vector>

#include "engine/energy.hpp"
#include "engine/goodput.hpp"
#include "engine/training.hpp"
#include "hardware/system.hpp"

namespace ridgeline {

struct OperationsOverrides {
    std::optional<double> failures_per_chip_hour, restart_s, checkpoint_write_Bps_per_host, checkpoint_interval_s, host_w, pue;
};

struct RunOutlook {
    double train_tokens = 0;
    GoodputInputs goodput_inputs;
    std::optional<GoodputReport> goodput;
    double busy_fraction = 0;  // of the step, in kernels: what the chips' power follows
    std::optional<EnergyReport> energy;
    std::vector<std::string> assumptions;  // each input and where it came from
    std::vector<std::string> missing;      // what could not be worked out, and how to supply it
    // The run's wall-clock time: with failures and checkpoints where known, else the steps alone.
    [[nodiscard]] double wall_s() const { return goodput && goodput->finishes ? goodput->wall_s : goodput_inputs.useful_s; }
};

// The energy of `chips` chips of `chip` on `hardware`'s system, busy in kernels for `busy_fraction`
// of their time and producing `tokens_per_s`: nullopt, with a line in `missing`, where the files
// and flags do not give chip power, host power and PUE; each input used goes into `assumptions`.
struct EnergyNotes {
    std::vector<std::string> assumptions, missing;
};
[[nodiscard]] std::optional<EnergyReport> facility_energy(const ChipSpec& chip, const Hardware& hardware, double chips, double busy_fraction,
                                                          double tokens_per_s, const OperationsOverrides& overrides, EnergyNotes& notes);

[[nodiscard]] RunOutlook run_outlook(const TrainingScenario& scenario, const TrainingReport& report, const Hardware& hardware,
                                     double train_tokens, const OperationsOverrides& overrides);

}  // namespace ridgeline
