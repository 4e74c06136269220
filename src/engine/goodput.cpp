#include "engine/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace ridgeline {

namespace {

constexpr const char* kOrigin = "goodput";
constexpr double kSecondsPerHour = 3600.0;

void require_positive(double value, const char* field) {
    if (!std::isfinite(value) || value <= 0) throw InputError(kOrigin, field, "expected a positive number, found " + std::to_string(value));
}

}  // namespace

GoodputReport goodput(const GoodputInputs& in) {
    require_positive(in.useful_s, "useful_s");
    require_positive(in.chips, "chips");
    require_positive(in.failures_per_chip_hour, "failures_per_chip_hour");
    require_positive(in.restart_s, "restart_s");
    require_positive(in.checkpoint_bytes, "checkpoint_bytes");
    require_positive(in.checkpoint_write_Bps, "checkpoint_write_Bps");
    if (in.checkpoint_interval_s) require_positive(*in.checkpoint_interval_s, "checkpoint_interval_s");

    GoodputReport r;
    const double failures_per_s = in.failures_per_chip_hour * in.chips / kSecondsPerHour;
    const double mtbf = 1.0 / failures_per_s;
    const double delta = in.checkpoint_bytes / in.checkpoint_write_Bps;
    r.mean_time_between_failures_s = mtbf;
    r.checkpoint_write_s = delta;
    r.interval_given = in.checkpoint_interval_s.has_value();
    if (in.checkpoint_interval_s) {
        r.checkpoint_interval_s = *in.checkpoint_interval_s;
    } else {
        // Daly's first-order optimum; beyond delta >= 2M, checkpoint once per failure interval.
        const double young = std::sqrt(2.0 * delta * mtbf);
        r.checkpoint_interval_s = delta < 2.0 * mtbf && young > delta ? young - delta : mtbf;
    }
    const double tau = r.checkpoint_interval_s;
    // Each failure costs a restart and half a segment (work and its checkpoint) on average; an
    // interval longer than the run leaves the whole run as the segment.
    const double segment_s = std::min(tau, in.useful_s) + delta;
    const double per_failure_s = in.restart_s + 0.5 * segment_s;
    const double progress = 1.0 - failures_per_s * per_failure_s;
    if (progress <= 0) {
        r.finishes = false;
        return r;
    }
    r.wall_s = in.useful_s * (1.0 + delta / tau) / progress;
    r.expected_failures = failures_per_s * r.wall_s;
    r.checkpointing_s = in.useful_s * delta / tau;
    r.lost_work_s = r.expected_failures * 0.5 * segment_s;
    r.restarting_s = r.expected_failures * in.restart_s;
    r.goodput = in.useful_s / r.wall_s;
    return r;
}

}  // namespace ridgeline
