#include "calibration/fit.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <Eigen/Dense>

#include "collective/link_bytes.hpp"
#include "core/error.hpp"

namespace ridgeline::calibration {

namespace {

double d(std::int64_t value) { return static_cast<double>(value); }

Residuals residuals_of(const LinearFit& fit, const std::vector<double>& units, const std::vector<double>& bytes,
                       const std::vector<double>& times) {
    Residuals r;
    double squares = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
        const double model = fit.latency_s * units[i] + fit.s_per_byte * bytes[i];
        const double relative = (model - times[i]) / times[i];
        squares += relative * relative;
        r.max = std::max(r.max, std::abs(relative));
    }
    r.samples = static_cast<int>(times.size());
    r.rms = times.empty() ? 0 : std::sqrt(squares / d(r.samples));
    return r;
}

}  // namespace

std::vector<double> fit_non_negative(const std::vector<std::vector<double>>& columns, const std::vector<double>& times_s) {
    const std::size_t count = columns.size();
    const auto rows = static_cast<Eigen::Index>(times_s.size());
    std::vector<double> best(count, 0.0);
    double best_error = INFINITY;
    // Few columns: try every subset, keep the best whose unconstrained solution is non-negative.
    for (unsigned subset = 1; subset < (1U << count); ++subset) {
        std::vector<std::size_t> used;
        for (std::size_t j = 0; j < count; ++j)
            if ((subset >> j & 1U) != 0 && std::any_of(columns[j].begin(), columns[j].end(), [](double v) { return v != 0; }))
                used.push_back(j);
        if (used.size() != static_cast<std::size_t>(std::popcount(subset))) continue;
        // Dividing each row by its measured time makes the residuals relative: a 4 KiB message
        // counts as much as a 64 MiB one.
        Eigen::MatrixXd a(rows, static_cast<Eigen::Index>(used.size()));
        for (Eigen::Index i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < used.size(); ++j)
                a(i, static_cast<Eigen::Index>(j)) = columns[used[j]][static_cast<std::size_t>(i)] / times_s[static_cast<std::size_t>(i)];
        const Eigen::VectorXd ones = Eigen::VectorXd::Ones(rows);
        const Eigen::VectorXd x = a.colPivHouseholderQr().solve(ones);
        if (!(x.minCoeff() >= 0)) continue;
        const double error = (a * x - ones).squaredNorm();
        if (error < best_error) {
            best_error = error;
            std::fill(best.begin(), best.end(), 0.0);
            for (std::size_t j = 0; j < used.size(); ++j) best[used[j]] = x(static_cast<Eigen::Index>(j));
        }
    }
    return best;
}

LinearFit fit_latency_bandwidth(const std::vector<double>& latency_units, const std::vector<double>& bytes,
                                const std::vector<double>& times_s, const std::string& what) {
    if (times_s.size() < 2 || latency_units.size() != times_s.size() || bytes.size() != times_s.size())
        throw InputError(what, "", "at least two measurements are needed to fit a latency and a bandwidth");
    const std::vector<double> x = fit_non_negative({latency_units, bytes}, times_s);
    LinearFit fit{x[0], x[1], {}};
    fit.residuals = residuals_of(fit, latency_units, bytes, times_s);
    return fit;
}

GemmFit fit_gemms(const std::vector<GemmSample>& gemms, double memory_s_per_byte) {
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> shapes;
    for (const GemmSample& g : gemms) shapes.insert({g.m, g.k, g.n});
    if (shapes.size() < 3) throw InputError("gemms", "", "GEMMs of at least three shapes are needed to fit the shape model");
    const std::size_t count = gemms.size();
    std::vector<double> ones(count, 1.0), work(count), times(count), memory_s(count);
    for (std::size_t i = 0; i < count; ++i) times[i] = gemms[i].time_s;
    double weight_sum = 0;  // of 1 / t^2: the relative least squares' closed form for the overhead
    for (const double t : times) weight_sum += 1.0 / (t * t);
    GemmFit best;
    best.residuals.rms = INFINITY;
    // half_dim and output_passes enter non-linearly, and the roofline's max too: scan them (half_dim
    // 0, then 1 to 8192 on a log grid; passes 1 to 6 in halves) and the peak around the fit of the compute
    // side alone; the overhead then has a closed form.
    for (int step = -1; step <= 130; ++step) {
        const double half_dim = step < 0 ? 0.0 : std::pow(2.0, step / 10.0);
        for (std::size_t i = 0; i < count; ++i) {
            const GemmSample& g = gemms[i];
            const auto tile = [&](std::int64_t x) { return d(x) / (d(x) + half_dim); };
            work[i] = 2.0 * d(g.m) * d(g.k) * d(g.n) / (tile(g.m) * tile(g.k) * tile(g.n));
        }
        const LinearFit compute_only = fit_latency_bandwidth(ones, work, times, "gemms");
        if (!(compute_only.s_per_byte > 0)) continue;
        for (int half_passes = 2; half_passes <= 12; ++half_passes) {
            const double passes = half_passes / 2.0;
            for (std::size_t i = 0; i < count; ++i) {
                const GemmSample& g = gemms[i];
                memory_s[i] = 4.0 * (d(g.m) * d(g.k) + d(g.k) * d(g.n) + passes * d(g.m) * d(g.n)) * memory_s_per_byte;
            }
            for (int j = -64; j <= 64; ++j) {
                const double peak = std::pow(2.0, j / 64.0) / compute_only.s_per_byte;
                double lift = 0;
                for (std::size_t i = 0; i < count; ++i)
                    lift += (times[i] - std::max(work[i] / peak, memory_s[i])) / (times[i] * times[i]);
                const double overhead = std::max(0.0, lift / weight_sum);
                Residuals r;
                double squares = 0;
                for (std::size_t i = 0; i < count; ++i) {
                    const double relative = (overhead + std::max(work[i] / peak, memory_s[i]) - times[i]) / times[i];
                    squares += relative * relative;
                    r.max = std::max(r.max, std::abs(relative));
                }
                r.samples = static_cast<int>(count);
                r.rms = std::sqrt(squares / d(r.samples));
                if (r.rms < best.residuals.rms) best = {peak, half_dim, passes, overhead, r};
            }
        }
    }
    if (!(best.peak_flops_per_s > 0)) throw InputError("gemms", "time_s", "the GEMM times do not grow with their FLOPs");
    return best;
}

CollectiveTerms collective_terms(CollectiveKind kind, double bytes, std::int64_t devices) {
    const double k = d(devices);
    const double fraction = (k - 1.0) / k;
    switch (kind) {
        case CollectiveKind::all_gather:
        case CollectiveKind::reduce_scatter: return {k - 1.0, bytes * fraction};
        case CollectiveKind::all_reduce: return {2.0 * (k - 1.0), 2.0 * bytes * fraction};
        case CollectiveKind::all_to_all: return {1.0, (k - 1.0) * bytes / (k * k)};
        case CollectiveKind::permute:
        case CollectiveKind::broadcast: return {1.0, bytes};
    }
    return {};
}

CalibrationFit fit_measurements(const Measurements& m, const std::string& origin) {
    CalibrationFit fit;
    {
        std::vector<double> units, bytes, times;
        for (const CopySample& c : m.copies) {
            units.push_back(1.0);
            bytes.push_back(2.0 * c.bytes);  // read once, written once
            times.push_back(c.time_s);
        }
        if (std::set<double>(bytes.begin(), bytes.end()).size() < 2)
            throw InputError(origin, "copies", "copies of at least two sizes are needed to fit a latency and the memory bandwidth");
        fit.copy = fit_latency_bandwidth(units, bytes, times, origin);
    }
    try {
        fit.gemm = fit_gemms(m.gemms, fit.copy.s_per_byte);
    } catch (const InputError& e) {
        throw InputError(origin, "gemms", e.what());
    }

    std::int64_t devices = 1;
    for (const CollectiveSample& c : m.collectives) devices = std::max(devices, c.devices);
    // Devices of one host share its last-level cache.
    fit.on_chip_bytes_per_device = m.provenance.cache_bytes / d(std::max<std::int64_t>(1, m.provenance.devices));
    std::map<CollectiveKind, std::vector<const CollectiveSample*>> by_kind;
    for (const CollectiveSample& c : m.collectives)
        if (c.devices == devices && devices > 1) by_kind[c.kind].push_back(&c);
    std::vector<double> ring_latencies_s;
    for (const auto& [kind, samples] : by_kind) {
        std::set<double> sizes;
        for (const CollectiveSample* c : samples) sizes.insert(c->bytes);
        if (sizes.size() < 2) continue;  // one size: a latency and a rate cannot be told apart
        std::vector<double> units, streaming, cached, times;
        for (const CollectiveSample* c : samples) {
            const CollectiveTerms terms = collective_terms(kind, c->bytes, devices);
            const double spilled = spilled_fraction(c->bytes, fit.on_chip_bytes_per_device);
            units.push_back(terms.latency_units);
            streaming.push_back(terms.link_bytes * spilled);
            cached.push_back(terms.link_bytes * (1.0 - spilled));
            times.push_back(c->time_s);
        }
        const std::vector<double> x = fit_non_negative({units, streaming, cached}, times);
        CollectiveFit kind_fit{kind, devices, x[0], x[1], x[2], {}};
        // A regime no message reached (or whose term fitted to zero) takes the other's speed.
        if (!(kind_fit.streaming_s_per_byte > 0)) kind_fit.streaming_s_per_byte = kind_fit.cached_s_per_byte;
        if (!(kind_fit.cached_s_per_byte > 0)) kind_fit.cached_s_per_byte = kind_fit.streaming_s_per_byte;
        if (!(kind_fit.streaming_s_per_byte > 0)) continue;  // times that do not grow with bytes
        const LinearFit as_linear{kind_fit.latency_s, 1.0, {}};
        std::vector<double> link_bytes(times.size());
        for (std::size_t i = 0; i < times.size(); ++i)
            link_bytes[i] = streaming[i] * kind_fit.streaming_s_per_byte + cached[i] * kind_fit.cached_s_per_byte;
        kind_fit.residuals = residuals_of(as_linear, units, link_bytes, times);
        fit.collectives.push_back(kind_fit);
        if (kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_reduce)
            ring_latencies_s.push_back(kind_fit.latency_s);
    }
    if (fit.collectives.empty()) {
        // One device (or too few collectives measured): nothing to fit; memory speed stands in.
        fit.link = {0, fit.copy.s_per_byte, {}};
    } else {
        // The fastest kind streams at the link's rate; the others reach a fraction of it.
        fit.link.s_per_byte = fit.collectives.front().streaming_s_per_byte;
        for (const CollectiveFit& c : fit.collectives) fit.link.s_per_byte = std::min(fit.link.s_per_byte, c.streaming_s_per_byte);
        std::sort(ring_latencies_s.begin(), ring_latencies_s.end());
        fit.link.latency_s = ring_latencies_s.empty() ? 0.0 : ring_latencies_s[ring_latencies_s.size() / 2];
        // Residuals under one latency per ring step, as the engine reads the description.
        std::vector<double> units, seconds_per_link, times;
        for (const CollectiveFit& c : fit.collectives)
            for (const CollectiveSample* sample : by_kind[c.kind]) {
                const CollectiveTerms terms = collective_terms(c.kind, sample->bytes, devices);
                const double spilled = spilled_fraction(sample->bytes, fit.on_chip_bytes_per_device);
                units.push_back(terms.latency_units);
                seconds_per_link.push_back(terms.link_bytes * (spilled * c.streaming_s_per_byte + (1.0 - spilled) * c.cached_s_per_byte));
                times.push_back(sample->time_s);
            }
        fit.link.residuals = residuals_of({fit.link.latency_s, 1.0, {}}, units, seconds_per_link, times);
    }

    MeasuredRange& r = fit.range;
    r.gemm_dim_min = INFINITY;
    for (const GemmSample& g : m.gemms) {
        r.gemm_dim_min = std::min({r.gemm_dim_min, d(g.m), d(g.k), d(g.n)});
        r.gemm_dim_max = std::max({r.gemm_dim_max, d(g.m), d(g.k), d(g.n)});
    }
    r.message_bytes_min = INFINITY;
    for (const CollectiveSample& c : m.collectives) {
        r.message_bytes_min = std::min(r.message_bytes_min, c.bytes);
        r.message_bytes_max = std::max(r.message_bytes_max, c.bytes);
    }
    if (m.collectives.empty()) {
        r.message_bytes_min = m.copies.front().bytes;
        r.message_bytes_max = m.copies.front().bytes;
        for (const CopySample& c : m.copies) {
            r.message_bytes_min = std::min(r.message_bytes_min, c.bytes);
            r.message_bytes_max = std::max(r.message_bytes_max, c.bytes);
        }
    }
    r.devices_max = d(std::max(devices, m.provenance.devices));
    return fit;
}

ChipSpec fitted_chip(const CalibrationFit& fit, const Provenance& provenance, const std::string& name) {
    ChipSpec chip;
    chip.name = name;
    chip.description = "calibrated with the " + provenance.backend + " backend on " + provenance.host + " (" +
                       provenance.cpu_model + ", " + std::to_string(provenance.devices) + " devices, " + provenance.date + ")";
    chip.kind = ChipKind::gpu;  // a flat switched group of devices: the nvlink level of the model
    // The backends compute in fp32; bf16 (required by every model) is given the same rate.
    chip.peak_flops_per_s[index_of(Dtype::fp32)] = fit.gemm.peak_flops_per_s;
    chip.peak_flops_per_s[index_of(Dtype::bf16)] = fit.gemm.peak_flops_per_s;
    chip.peak_flops_per_s[index_of(Dtype::fp16)] = fit.gemm.peak_flops_per_s;
    chip.hbm_bytes = provenance.memory_bytes;
    chip.hbm_bw_Bps = 1.0 / fit.copy.s_per_byte;
    chip.on_chip_memory_bytes = fit.on_chip_bytes_per_device;
    chip.host_link_Bps = chip.hbm_bw_Bps;
    const double link_Bps = fit.link.s_per_byte > 0 ? 1.0 / fit.link.s_per_byte : chip.hbm_bw_Bps;
    const double hop_s = std::max(fit.link.latency_s, 1e-9);  // the loader wants it positive
    chip.nvlink = NvlinkSpec{1, link_Bps, hop_s};
    chip.scale_out = ScaleOutSpec{"none", link_Bps, hop_s};
    chip.efficiency.matmul_max = 1.0;
    chip.efficiency.matmul_max_fp8 = 1.0;
    chip.efficiency.matmul_half_dim = fit.gemm.half_dim;
    chip.efficiency.kernel_overhead_s = fit.gemm.overhead_s;
    chip.efficiency.matmul_output_passes = fit.gemm.output_passes;
    for (const CollectiveFit& c : fit.collectives) {
        const auto k = static_cast<std::size_t>(c.kind);
        chip.efficiency.collective_streaming[k] = fit.link.s_per_byte / c.streaming_s_per_byte;
        chip.efficiency.collective_cached[k] = fit.link.s_per_byte / c.cached_s_per_byte;
    }
    chip.measured_range = fit.range;
    return chip;
}

}  // namespace ridgeline::calibration
