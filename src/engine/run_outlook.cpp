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
    Inputs(const std::optional<SystemSpec>& system, RunOutlook& outlook) : system_(system), outlook_(outlook) {}

    std::optional<double> get(const std::optional<double>& flag, std::optional<double> SystemOperations::*field, const char* name,
                              const char* flag_name, const char* unit) {
        if (flag) return note(*flag, name, unit, std::string("--") + flag_name);
        if (system_ && system_->operations && (system_->operations.value().*field))
            return note(*(system_->operations.value().*field), name, unit, "system " + system_->name);
        outlook_.missing.push_back(std::string(name) + ": not in the hardware's system file; give --" + flag_name);
        return std::nullopt;
    }
    double note(double value, const std::string& name, const std::string& unit, const std::string& from) {
        outlook_.assumptions.push_back(name + " " + format(value) + (unit.empty() ? "" : " " + unit) + " (" + from + ")");
        return value;
    }

private:
    static std::string format(double value) {
        char text[32];
        std::snprintf(text, sizeof text, "%.4g", value);
        return text;
    }
    const std::optional<SystemSpec>& system_;
    RunOutlook& outlook_;
};

double busy_fraction(const TrainingReport& report) {
    double busy = 0;
    for (const StepComponent& c : report.components) {
        const Bound b = c.bound.bound;
        if (b == Bound::compute || b == Bound::memory || b == Bound::weights || b == Bound::kv_cache) busy += c.time_s;
    }
    return report.step_time_s > 0 ? std::min(1.0, busy / report.step_time_s) : 0.0;
}

}  // namespace

RunOutlook run_outlook(const TrainingScenario& scenario, const TrainingReport& report, const Hardware& hardware, double train_tokens,
                       const OperationsOverrides& overrides) {
    RunOutlook o;
    o.train_tokens = train_tokens;
    const double chips = static_cast<double>(scenario.cluster.chips());
    const double hosts = hardware.system ? std::ceil(chips / static_cast<double>(hardware.system->chips_per_host)) : 0.0;
    Inputs inputs(hardware.system, o);

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

    EnergyInputs& e = o.energy_inputs;
    e.chips = chips;
    e.hosts = hosts;
    e.busy_fraction = busy_fraction(report);
    e.step_s = report.step_time_s;
    e.tokens_per_step = report.tokens_per_step;
    const auto host_w = inputs.get(overrides.host_w, &SystemOperations::host_w, "host power", "host-w", "W");
    const auto pue = inputs.get(overrides.pue, &SystemOperations::pue, "PUE", "pue", "");
    if (!scenario.chip.power) o.missing.push_back("chip power: " + scenario.chip.name + "'s file gives none (no citable figure found)");
    if (host_w && pue && scenario.chip.power) {
        const ChipPower& power = *scenario.chip.power;
        e.chip_max_w = inputs.note(power.max_w, "chip maximum power", "W", "chip " + scenario.chip.name);
        if (power.idle_w) e.chip_idle_w = inputs.note(*power.idle_w, "chip idle power", "W", "chip " + scenario.chip.name);
        else e.chip_idle_w = inputs.note(power.max_w, "chip idle power", "W", "no idle figure for " + scenario.chip.name + ": maximum throughout, an upper bound");
        e.host_w = *host_w;
        e.pue = *pue;
        o.energy = energy(e);
    }
    return o;
}

}  // namespace ridgeline
