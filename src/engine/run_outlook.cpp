#include "engine/run_outlook.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/training_state.hpp"
#include "model/transformer_math.hpp"

namespace ridgeline {

namespace {

// An input from its flag, else from the system file; nullopt (and a line in `missing`) otherwise.
class Inputs {
public:
    Inputs(const std::optional<SystemSpec>& system, std::vector<std::string>& assumptions, std::vector<std::string>& missing)
        : system_(system), assumptions_(assumptions), missing_(missing) {}

    std::optional<double> get(const std::optional<double>& flag, std::optional<double> SystemOperations::*field, const char* name,
                              const char* flag_name, const char* unit) {
        if (flag) return note(*flag, name, unit, std::string("--") + flag_name);
        if (system_ && system_->operations && (system_->operations.value().*field))
            return note(*(system_->operations.value().*field), name, unit, "system " + system_->name);
        missing_.push_back(std::string(name) + ": not in the hardware's system file; give --" + flag_name);
        return std::nullopt;
    }
    double note(double value, const std::string& name, const std::string& unit, const std::string& from) {
        assumptions_.push_back(name + " " + format(value) + (unit.empty() ? "" : " " + unit) + " (" + from + ")");
        return value;
    }

private:
    static std::string format(double value) {
        char text[32];
        std::snprintf(text, sizeof text, "%.4g", value);
        return text;
    }
    const std::optional<SystemSpec>& system_;
    std::vector<std::string>& assumptions_;
    std::vector<std::string>& missing_;
};

double kernel_share(const TrainingReport& report) {
    double busy = 0;
    for (const StepComponent& c : report.components) {
        const Bound b = c.bound.bound;
        if (b == Bound::compute || b == Bound::memory || b == Bound::weights || b == Bound::kv_cache) busy += c.time_s;
    }
    return report.step_time_s > 0 ? std::min(1.0, busy / report.step_time_s) : 0.0;
}

double hosts_of(const Hardware& hardware, double chips) {
    return hardware.system ? std::ceil(chips / static_cast<double>(hardware.system->chips_per_host)) : 0.0;
}

}  // namespace

std::optional<EnergyReport> facility_energy(const ChipSpec& chip, const Hardware& hardware, double chips, double busy_fraction,
                                            double tokens_per_s, const OperationsOverrides& overrides, EnergyNotes& notes) {
    Inputs inputs(hardware.system, notes.assumptions, notes.missing);
    const auto host_w = inputs.get(overrides.host_w, &SystemOperations::host_w, "host power", "host-w", "W");
    const auto pue = inputs.get(overrides.pue, &SystemOperations::pue, "PUE", "pue", "");
    if (!chip.power) notes.missing.push_back("chip power: " + chip.name + "'s file gives none (no citable figure found)");
    if (!host_w || !pue || !chip.power) return std::nullopt;
    EnergyInputs e;
    e.chips = chips;
    e.hosts = hosts_of(hardware, chips);
    e.busy_fraction = busy_fraction;
    e.step_s = 1.0;  // one second of work: per_step_j is the facility's power in W
    e.tokens_per_step = tokens_per_s;
    const ChipPower& power = *chip.power;
    e.chip_max_w = inputs.note(power.max_w, "chip maximum power", "W", "chip " + chip.name);
    if (power.idle_w) e.chip_idle_w = inputs.note(*power.idle_w, "chip idle power", "W", "chip " + chip.name);
    else e.chip_idle_w = inputs.note(power.max_w, "chip idle power", "W", "no idle figure for " + chip.name + ": maximum throughout, an upper bound");
    e.host_w = *host_w;
    e.pue = *pue;
    return energy(e);
}

RunOutlook run_outlook(const TrainingScenario& scenario, const TrainingReport& report, const Hardware& hardware, double train_tokens,
                       const OperationsOverrides& overrides) {
    RunOutlook o;
    o.train_tokens = train_tokens;
    const double chips = static_cast<double>(scenario.cluster.chips());
    const double hosts = hosts_of(hardware, chips);
    Inputs inputs(hardware.system, o.assumptions, o.missing);

    GoodputInputs& g = o.goodput_inputs;
    g.useful_s = report.time_to_train_s(train_tokens);
    g.chips = chips;
    g.checkpoint_bytes = count_params(scenario.model).total * TrainingPrecision::fp32_gradient_accumulation().checkpoint_bytes_per_param();
    o.assumptions.push_back("checkpoint " + std::to_string(static_cast<long long>(g.checkpoint_bytes / 1e9)) +
                            " GB: weights, fp32 master weights and Adam moments, written blocking");
    const auto failures = inputs.get(overrides.failures_per_chip_hour, &SystemOperations::failures_per_chip_hour, "failures per chip-hour",
                                     "failures-per-chip-hour", "");
    const auto restart = inputs.get(overrides.restart_s, &SystemOperations::restart_s, "restart", "restart-s", "s");
    const auto per_host = inputs.get(overrides.checkpoint_write_Bps_per_host, &SystemOperations::checkpoint_write_Bps_per_host,
                                     "checkpoint write per host", "checkpoint-write-Bps-per-host", "B/s");
    if (overrides.checkpoint_interval_s) g.checkpoint_interval_s = inputs.note(*overrides.checkpoint_interval_s, "checkpoint interval", "s",
                                                                                "--checkpoint-interval-s");
    if (failures && restart && per_host) {
        const double hosts_writing = hosts > 0 ? hosts : chips;  // no system: each chip its own host
        double write = *per_host * hosts_writing;
        if (!overrides.checkpoint_write_Bps_per_host && hardware.system && hardware.system->operations &&
            hardware.system->operations->checkpoint_write_Bps_total)
            write = std::min(write, inputs.note(*hardware.system->operations->checkpoint_write_Bps_total, "storage write limit", "B/s",
                                                "system " + hardware.system->name));
        g.failures_per_chip_hour = *failures;
        g.restart_s = *restart;
        g.checkpoint_write_Bps = write;
        o.goodput = goodput(g);
    }

    EnergyNotes notes;
    const double busy = kernel_share(report);
    if (const auto per_second = facility_energy(scenario.chip, hardware, chips, busy, report.tokens_per_step / report.step_time_s, overrides, notes)) {
        EnergyReport e = *per_second;
        e.per_step_j = e.facility_w * report.step_time_s;
        o.energy = e;
    }
    o.busy_fraction = busy;
    o.assumptions.insert(o.assumptions.end(), notes.assumptions.begin(), notes.assumptions.end());
    o.missing.insert(o.missing.end(), notes.missing.begin(), notes.missing.end());
    return o;
}

}  // namespace ridgeline
