#include "calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <Eigen/Dense>

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

// Least squares of one coefficient alone (rows already divided by the measured times).
double single(const Eigen::VectorXd& column) {
    const double norm = column.squaredNorm();
    return norm > 0 ? column.sum() / norm : 0;
}

}  // namespace

LinearFit fit_latency_bandwidth(const std::vector<double>& latency_units, const std::vector<double>& bytes,
                                const std::vector<double>& times_s, const std::string& what) {
    const auto rows = static_cast<Eigen::Index>(times_s.size());
    if (rows < 2 || latency_units.size() != times_s.size() || bytes.size() != times_s.size())
        throw InputError(what, "", "at least two measurements are needed to fit a latency and a bandwidth");
    // Dividing each row by its measured time makes the residuals relative: a 4 KiB message counts
    // as much as a 64 MiB one.
    Eigen::MatrixXd a(rows, 2);
    Eigen::VectorXd ones = Eigen::VectorXd::Ones(rows);
    for (Eigen::Index i = 0; i < rows; ++i) {
        const auto u = static_cast<std::size_t>(i);
        a(i, 0) = latency_units[u] / times_s[u];
        a(i, 1) = bytes[u] / times_s[u];
    }
    const Eigen::Vector2d x = a.colPivHouseholderQr().solve(ones);
    LinearFit fit{x(0), x(1), {}};
    // Negative coefficients have no physical meaning: drop that term and refit the other.
    if (!(fit.latency_s >= 0)) fit = {0, single(a.col(1)), {}};
    if (!(fit.s_per_byte > 0)) fit = {single(a.col(0)), 0, {}};
    fit.residuals = residuals_of(fit, latency_units, bytes, times_s);
    return fit;
}

GemmFit fit_gemms(const std::vector<GemmSample>& gemms) {
    if (gemms.size() < 3) throw InputError("gemms", "", "at least three GEMM measurements are needed to fit the shape model");
    std::vector<double> ones(gemms.size(), 1.0), work(gemms.size()), times(gemms.size());
    for (std::size_t i = 0; i < gemms.size(); ++i) times[i] = gemms[i].time_s;
    GemmFit best;
    best.residuals.rms = INFINITY;
    // half_dim enters non-linearly: scan it (0, then 1 to 8192 on a log grid); for each value the
    // rest is linear in (overhead, 1 / peak).
    for (int step = -1; step <= 130; ++step) {
        const double half_dim = step < 0 ? 0.0 : std::pow(2.0, step / 10.0);
        for (std::size_t i = 0; i < gemms.size(); ++i) {
            const GemmSample& g = gemms[i];
            const auto tile = [&](std::int64_t x) { return d(x) / (d(x) + half_dim); };
            work[i] = 2.0 * d(g.m) * d(g.k) * d(g.n) / (tile(g.m) * tile(g.k) * tile(g.n));
        }
        const LinearFit fit = fit_latency_bandwidth(ones, work, times, "gemms");
        if (fit.s_per_byte > 0 && fit.residuals.rms < best.residuals.rms)
            best = {1.0 / fit.s_per_byte, half_dim, fit.latency_s, fit.residuals};
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
    try {
        fit.gemm = fit_gemms(m.gemms);
    } catch (const InputError& e) {
        throw InputError(origin, "gemms", e.what());
    }
    {
        std::vector<double> units, bytes, times;
        for (const CopySample& c : m.copies) {
            units.push_back(1.0);
            bytes.push_back(2.0 * c.bytes);  // read once, written once
            times.push_back(c.time_s);
        }
        if (times.size() < 2) throw InputError(origin, "copies", "at least two copy measurements are needed to fit the memory bandwidth");
        fit.copy = fit_latency_bandwidth(units, bytes, times, origin);
    }

    std::int64_t devices = 1;
    for (const CollectiveSample& c : m.collectives) devices = std::max(devices, c.devices);
    std::map<CollectiveKind, std::vector<const CollectiveSample*>> by_kind;
    for (const CollectiveSample& c : m.collectives)
        if (c.devices == devices && devices > 1) by_kind[c.kind].push_back(&c);
    std::vector<double> link_units, link_bytes, link_times;
    for (const auto& [kind, samples] : by_kind) {
        std::vector<double> ones, bytes, times;
        for (const CollectiveSample* c : samples) {
            const CollectiveTerms terms = collective_terms(kind, c->bytes, devices);
            ones.push_back(1.0);
            bytes.push_back(terms.link_bytes);
            times.push_back(c->time_s);
            if (kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_reduce) {
                link_units.push_back(terms.latency_units);
                link_bytes.push_back(terms.link_bytes);
                link_times.push_back(c->time_s);
            }
        }
        if (times.size() >= 2) fit.collectives.push_back({kind, devices, fit_latency_bandwidth(ones, bytes, times, origin)});
    }
    if (link_times.size() >= 2) {
        fit.link = fit_latency_bandwidth(link_units, link_bytes, link_times, origin);
    } else {
        // One device (or no gathers and reductions measured): nothing to fit; memory speed stands in.
        fit.link = {0, fit.copy.s_per_byte, {}};
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
    chip.on_chip_memory_bytes = provenance.cache_bytes;
    chip.host_link_Bps = chip.hbm_bw_Bps;
    const double link_Bps = fit.link.s_per_byte > 0 ? 1.0 / fit.link.s_per_byte : chip.hbm_bw_Bps;
    const double hop_s = std::max(fit.link.latency_s, 1e-9);  // the loader wants it positive
    chip.nvlink = NvlinkSpec{1, link_Bps, hop_s};
    chip.scale_out = ScaleOutSpec{"none", link_Bps, hop_s};
    chip.efficiency.matmul_max = 1.0;
    chip.efficiency.matmul_max_fp8 = 1.0;
    chip.efficiency.matmul_half_dim = fit.gemm.half_dim;
    chip.efficiency.kernel_overhead_s = fit.gemm.overhead_s;
    chip.measured_range = fit.range;
    return chip;
}

}  // namespace ridgeline::calibration
