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
    EnergyInputs energy_inputs;
    std::optional<EnergyReport> energy;
    std::vector<std::string> assumptions;  // each input and where it came from
    std::vector<std::string> missing;      // what could not be worked out, and how to supply it
    // The run's wall-clock time: with failures and checkpoints where known, else the steps alone.
    [[nodiscard]] double wall_s() const { return goodput && goodput->finishes ? goodput->wall_s : goodput_inputs.useful_s; }
};

[[nodiscard]] RunOutlook run_outlook(const TrainingScenario& scenario, const TrainingReport& report, const Hardware& hardware,
                                     double train_tokens, const OperationsOverrides& overrides);

}  // namespace ridgeline
