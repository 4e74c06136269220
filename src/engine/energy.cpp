#include "engine/energy.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace ridgeline {

namespace {

void require(bool ok, const char* field, double value, const char* expected) {
    if (!ok || !std::isfinite(value)) throw InputError("energy", field, std::string("expected ") + expected + ", found " + std::to_string(value));
}

}  // namespace

EnergyReport energy(const EnergyInputs& in) {
    require(in.chips > 0, "chips", in.chips, "a positive count");
    require(in.hosts >= 0, "hosts", in.hosts, "a count");
    require(in.chip_idle_w >= 0, "chip_idle_w", in.chip_idle_w, "a power >= 0");
    require(in.chip_max_w >= in.chip_idle_w && in.chip_max_w > 0, "chip_max_w", in.chip_max_w, "a power above idle");
    require(in.host_w >= 0, "host_w", in.host_w, "a power >= 0");
    require(in.pue >= 1.0, "pue", in.pue, "a ratio >= 1");
    require(in.busy_fraction >= 0 && in.busy_fraction <= 1, "busy_fraction", in.busy_fraction, "a fraction in [0, 1]");
    require(in.step_s > 0, "step_s", in.step_s, "a positive time");
    require(in.tokens_per_step > 0, "tokens_per_step", in.tokens_per_step, "a positive count");

    EnergyReport r;
    r.chip_w = in.chip_idle_w + (in.chip_max_w - in.chip_idle_w) * in.busy_fraction;
    r.it_w = in.chips * r.chip_w + in.hosts * in.host_w;
    r.facility_w = r.it_w * in.pue;
    r.per_step_j = r.facility_w * in.step_s;
    r.per_million_tokens_j = r.per_step_j / in.tokens_per_step * 1e6;
    return r;
}

}  // namespace ridgeline
