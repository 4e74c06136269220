#pragma once
// Plausible ranges for the physical quantities description files give, so that a typo or a hostile
// value (a bandwidth of 5e-324 B/s, a chip of 1e300 FLOP/s) is refused by name instead of turning
// into NaN, inf or a confident nonsense answer downstream. Wide on purpose: from the smallest
// device anyone would model to well beyond any built.
namespace ridgeline::io {

struct PhysicalRange {
    double min = 0, max = 0;
    const char* unit = "";
};

inline constexpr PhysicalRange kBandwidthBps{1e6, 1e15, "B/s"};       // 1 MB/s .. 1 PB/s
inline constexpr PhysicalRange kFlopsPerS{1e9, 1e18, "FLOP/s"};        // 1 GFLOP/s .. 1 EFLOP/s per chip
inline constexpr PhysicalRange kMemoryBytes{1e6, 1e15, "B"};           // 1 MB .. 1 PB of device memory
inline constexpr PhysicalRange kOnChipBytes{1e3, 1e12, "B"};
inline constexpr PhysicalRange kLatencyS{1e-10, 1.0, "s"};             // 0.1 ns .. 1 s
inline constexpr PhysicalRange kClockHz{1e6, 1e11, "Hz"};
inline constexpr PhysicalRange kPriceUsdPerHour{1e-4, 1e4, "USD/h"};
inline constexpr PhysicalRange kOversubscription{1.0, 1e3, ""};

}  // namespace ridgeline::io
