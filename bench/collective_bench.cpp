// The cpu backend's shared-memory ring collectives against memcpy, in the same run. Bandwidths
// are NCCL's bus bandwidth (what each device's memory moves per second, comparable across
// collectives and with a copy): AllGather and ReduceScatter (N-1)/N x bytes / t, AllReduce twice
// that, send/recv bytes / t; memcpy is one thread copying the same bytes. Exits 1 below the goal
// (every collective >= 0.5x memcpy).
#include <algorithm>
#include <cstdio>
#include <thread>

#include "calibration/backend.hpp"
#include "calibration/fit.hpp"

int main() {
    using namespace ridgeline;
    using namespace ridgeline::calibration;
    const int devices = 2;  // the bench script needs a host with two cores or more
    auto one = make_cpu_backend({"cpu", 1, "", 60});
    auto group = make_cpu_backend({"cpu", devices, "", 60});
    std::printf("%-14s %10s %14s %14s %8s\n", "collective", "MiB", "bus GB/s", "memcpy GB/s", "ratio");
    double worst = 1e300;
    for (const double mib : {64.0, 128.0}) {
        const double bytes = mib * 1024 * 1024;
        const double memcpy_Bps = bytes / one->copy_s(bytes);
        for (const CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::all_reduce,
                                          CollectiveKind::permute}) {
            const double t = group->collective_s(kind, bytes);
            const double bus_Bps = collective_terms(kind, bytes, devices).link_bytes / t;
            const double ratio = bus_Bps / memcpy_Bps;
            worst = std::min(worst, ratio);
            std::printf("%-14s %10.0f %14.2f %14.2f %8.2f\n", collective_name(kind), mib, bus_Bps / 1e9, memcpy_Bps / 1e9, ratio);
        }
    }
    const bool met = worst >= 0.5;
    std::printf("worst bus bandwidth / memcpy bandwidth on %d devices, messages >= 64 MiB: %.2fx (goal >= 0.50x): %s\n", devices,
                worst, met ? "met" : "NOT met");
    return met ? 0 : 1;
}
