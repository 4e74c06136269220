#pragma once
// Energy: each chip draws between its idle and its maximum board power in proportion to the share
// of the step it is busy in kernels (compute or memory-bound; waiting on the network or the
// pipeline counts as idle), each host adds its own power, and the facility multiplies the lot by
// its PUE.
namespace ridgeline {

struct EnergyInputs {
    double chips = 0;
    double hosts = 0;
    double chip_idle_w = 0;
    double chip_max_w = 0;
    double host_w = 0;            // per host, beyond its accelerators (CPUs, memory, NICs, fans)
    double pue = 0;               // facility power over IT power, >= 1
    double busy_fraction = 0;     // of the step, in [0, 1]
    double step_s = 0;
    double tokens_per_step = 0;
};

struct EnergyReport {
    double chip_w = 0;          // one chip at the modelled utilisation
    double it_w = 0;            // chips and hosts
    double facility_w = 0;      // with PUE
    double per_step_j = 0;
    double per_million_tokens_j = 0;
    [[nodiscard]] double over_s_j(double seconds) const { return facility_w * seconds; }
};

// InputError naming the field when an input is out of its range.
[[nodiscard]] EnergyReport energy(const EnergyInputs& in);

}  // namespace ridgeline
