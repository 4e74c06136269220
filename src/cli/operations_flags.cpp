#include "cli/operations_flags.hpp"

#include "io/physical_range.hpp"

namespace ridgeline::cli {

namespace {

CLI::Range in(const io::PhysicalRange& r) { return CLI::Range(r.min, r.max); }

}  // namespace

void add_power_flags(CLI::App& c, OperationsFlags& f) {
    c.add_option("--host-w", f.host_w, "power per host beyond its accelerators, W")->check(in(io::range::power_w));
    c.add_option("--pue", f.pue, "facility power over IT power")->check(in(io::range::pue));
}

void add_operations_flags(CLI::App& c, OperationsFlags& f) {
    add_power_flags(c, f);
    c.add_option("--failures-per-chip-hour", f.failures_per_chip_hour, "unexpected interruptions per chip-hour")
        ->check(in(io::range::failure_rate_per_chip_hour));
    c.add_option("--restart-s", f.restart_s, "seconds to detect a failure, reschedule and reload")->check(in(io::range::restart_s));
    c.add_option("--checkpoint-write-Bps-per-host", f.write_Bps, "checkpoint write bandwidth per host, B/s")->check(in(io::range::bandwidth_Bps));
    c.add_option("--checkpoint-interval-s", f.interval_s, "work between checkpoints (default: the Young/Daly optimum)")->check(CLI::Range(1.0, 1e9));
}

OperationsOverrides operations_overrides(const CLI::App& c, const OperationsFlags& f) {
    OperationsOverrides ops;
    const auto take = [&c](const char* flag, double value, std::optional<double>& into) {
        const CLI::Option* option = c.get_option_no_throw(flag);
        if (option != nullptr && option->count() > 0) into = value;
    };
    take("--failures-per-chip-hour", f.failures_per_chip_hour, ops.failures_per_chip_hour);
    take("--restart-s", f.restart_s, ops.restart_s);
    take("--checkpoint-write-Bps-per-host", f.write_Bps, ops.checkpoint_write_Bps_per_host);
    take("--checkpoint-interval-s", f.interval_s, ops.checkpoint_interval_s);
    take("--host-w", f.host_w, ops.host_w);
    take("--pue", f.pue, ops.pue);
    return ops;
}

}  // namespace ridgeline::cli
