#pragma once
// Turning measurements into the parameters of the cost model, by least squares (Eigen). Pure:
// measurements in, parameters and residuals out. Residuals are relative: (model - measured) / measured.
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/measurements.hpp"
#include "hardware/chip.hpp"

namespace ridgeline::calibration {

struct Residuals {
    double rms = 0;  // root mean square of the relative residuals
    double max = 0;  // largest |relative residual|
    int samples = 0;
};

// time = latency_s * latency_units + s_per_byte * bytes: alpha and beta of an alpha-beta model,
// with the latency counted in the units the cost model uses (hops, or 1 for a whole collective).
struct LinearFit {
    double latency_s = 0;
    double s_per_byte = 0;
    Residuals residuals;
};

// Minimises the relative residuals with both coefficients >= 0. InputError (naming `what`) with
// fewer than two samples.
[[nodiscard]] LinearFit fit_latency_bandwidth(const std::vector<double>& latency_units, const std::vector<double>& bytes,
                                              const std::vector<double>& times_s, const std::string& what);

// times ~ sum_j coefficient_j x columns[j], minimising the relative residuals with every
// coefficient >= 0 (columns of zeros get 0). Rows: one per time.
[[nodiscard]] std::vector<double> fit_non_negative(const std::vector<std::vector<double>>& columns, const std::vector<double>& times_s);

// time = overhead_s + max(2mkn / (peak x tile(m) tile(k) tile(n)), memory bytes x s_per_byte),
// tile(x) = x / (x + half_dim), memory bytes = 4 (mk + kn + output_passes x mn): the engine's
// GEMM on its roofline (matmul_efficiency with matmul_max = 1, so that `peak` is the throughput
// large GEMMs approach), with the memory speed of the copies.
struct GemmFit {
    double peak_flops_per_s = 0;
    double half_dim = 0;
    double output_passes = 1;
    double overhead_s = 0;
    Residuals residuals;
};
[[nodiscard]] GemmFit fit_gemms(const std::vector<GemmSample>& gemms, double memory_s_per_byte);

// One collective kind: time = latency_s x latency units + link bytes x (spilled x streaming
// + (1 - spilled) x cached), with link bytes and units as the cost model's switched level counts
// them and `spilled` the share beyond each device's on-chip memory (spilled_fraction).
struct CollectiveFit {
    CollectiveKind kind = CollectiveKind::all_gather;
    std::int64_t devices = 0;
    double latency_s = 0;
    double streaming_s_per_byte = 0;
    double cached_s_per_byte = 0;
    Residuals residuals;
};

struct CalibrationFit {
    GemmFit gemm;
    LinearFit copy;                          // bytes read plus written
    std::vector<CollectiveFit> collectives;  // per kind, at the largest device count measured
    // The link: the fastest kind's streaming bandwidth and the median per-step latency of the
    // rings (AllGather, ReduceScatter, AllReduce); residuals of every collective sample under
    // the description as the engine reads it.
    LinearFit link;
    double on_chip_bytes_per_device = 0;     // each device's share of the last-level cache
    MeasuredRange range;
};

// InputError (naming the measurements' origin) when a part has too few samples to fit.
[[nodiscard]] CalibrationFit fit_measurements(const Measurements& measurements, const std::string& origin);

// How the cost model counts a collective of `bytes` over `devices` on one switched level:
// latency in hops and bytes crossing a device's link (mirrors collective.cpp's flat_level).
struct CollectiveTerms {
    double latency_units = 0;
    double link_bytes = 0;
};
[[nodiscard]] CollectiveTerms collective_terms(CollectiveKind kind, double bytes, std::int64_t devices);

// The fitted description as the engine sees it (what `ridgeline fit` writes, see calibration_report).
[[nodiscard]] ChipSpec fitted_chip(const CalibrationFit& fit, const Provenance& provenance, const std::string& name);

}  // namespace ridgeline::calibration
