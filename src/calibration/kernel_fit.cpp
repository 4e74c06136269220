#include "calibration/kernel_fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "engine/roofline.hpp"
#include "engine/step_model.hpp"
#include "io/physical_range.hpp"

namespace ridgeline::calibration {

namespace {

using Loss = std::function<double(const std::vector<double>&)>;

// The smallest values a chip file holds (a ramp this short is none): the fit stays where it can be written.
constexpr double kMinHalf = io::range::kernel_dimension.min;
constexpr double kMinLaunch_s = io::range::latency_s.min;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Coordinate search: each parameter moved by shrinking relative steps while the loss falls. The
// losses are kinked (a GEMM's max of compute and traffic), so no gradients are used.
std::vector<double> coordinate_search(const Loss& loss, std::vector<double> x) {
    double best = loss(x);
    for (double scale : {0.2, 0.05, 0.01, 0.002}) {
        for (bool improved = true; improved;) {
            improved = false;
            for (std::size_t i = 0; i < x.size(); ++i)
                for (double sign : {1.0, -1.0}) {
                    std::vector<double> trial = x;
                    trial[i] = x[i] * (1.0 + sign * scale);
                    const double value = loss(trial);
                    if (value < best) {
                        x = trial;
                        best = value;
                        improved = true;
                    }
                }
        }
    }
    return x;
}

// Nelder-Mead on the parameters' logarithms (all are positive): it follows the diagonal valleys a
// coordinate search stalls in, such as a peak fraction traded against its row ramp.
std::vector<double> nelder_mead(const Loss& loss, const std::vector<double>& start) {
    const std::size_t n = start.size();
    const auto value = [&](const std::vector<double>& y) {
        std::vector<double> x(n);
        for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(y[i]);
        return loss(x);
    };
    std::vector<std::vector<double>> simplex(n + 1, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) simplex[0][i] = std::log(start[i]);
    for (std::size_t j = 1; j <= n; ++j) {
        simplex[j] = simplex[0];
        simplex[j][j - 1] += 0.5;  // a step of 65% in that parameter
    }
    std::vector<double> f(n + 1);
    for (std::size_t j = 0; j <= n; ++j) f[j] = value(simplex[j]);
    const auto along = [&](const std::vector<double>& centre, const std::vector<double>& worst, double t) {
        std::vector<double> y(n);
        for (std::size_t i = 0; i < n; ++i) y[i] = centre[i] + t * (worst[i] - centre[i]);
        return y;
    };
    for (int iteration = 0; iteration < 400 * static_cast<int>(n); ++iteration) {
        std::vector<std::size_t> order(n + 1);
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return f[a] < f[b]; });
        const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
        if (std::abs(f[worst] - f[best]) <= 1e-12 * (std::abs(f[best]) + 1e-12)) break;
        std::vector<double> centre(n, 0.0);
        for (std::size_t j = 0; j <= n; ++j)
            if (j != worst)
                for (std::size_t i = 0; i < n; ++i) centre[i] += simplex[j][i] / static_cast<double>(n);
        const auto reflected = along(centre, simplex[worst], -1.0);
        const double f_reflected = value(reflected);
        if (f_reflected < f[best]) {
            const auto expanded = along(centre, simplex[worst], -2.0);
            const double f_expanded = value(expanded);
            simplex[worst] = f_expanded < f_reflected ? expanded : reflected;
            f[worst] = std::min(f_expanded, f_reflected);
        } else if (f_reflected < f[second]) {
            simplex[worst] = reflected;
            f[worst] = f_reflected;
        } else {
            const auto contracted = along(centre, simplex[worst], f_reflected < f[worst] ? -0.5 : 0.5);
            const double f_contracted = value(contracted);
            if (f_contracted < std::min(f_reflected, f[worst])) {
                simplex[worst] = contracted;
                f[worst] = f_contracted;
            } else {  // shrink towards the best
                for (std::size_t j = 0; j <= n; ++j)
                    if (j != best) {
                        simplex[j] = along(simplex[best], simplex[j], 0.5);
                        f[j] = value(simplex[j]);
                    }
            }
        }
    }
    const std::size_t best = static_cast<std::size_t>(std::min_element(f.begin(), f.end()) - f.begin());
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(simplex[best][i]);
    return x;
}

// The coordinate search first (the fit the shipped blocks were first made with), then
// Nelder-Mead from there and a last coordinate polish; the lowest loss of the three wins.
std::vector<double> minimise(const Loss& loss, const std::vector<double>& start) {
    std::vector<double> x = coordinate_search(loss, start);
    const std::vector<double> refined = coordinate_search(loss, nelder_mead(loss, x));
    return loss(refined) < loss(x) ? refined : x;
}

double log_ratio_squared(double predicted, double measured) {
    const double r = std::log(predicted / measured);
    return r * r;
}

double gemm_predicted_s(const ChipSpec& chip, const KernelGemmSample& g) {
    const auto m = static_cast<double>(g.m), k = static_cast<double>(g.k), n = static_cast<double>(g.n);
    return gemm_time(chip, {m, k, n, 1, k * n}, {g.dtype, g.dtype, g.dtype}).lower_bound_s();
}

// QK^T and AV: 4 B H S^2 D FLOPs, half of them under a causal mask.
double attention_forward_flops(const AttentionSample& a) {
    const auto s = static_cast<double>(a.seq);
    return 4.0 * static_cast<double>(a.batch * a.q_heads * a.head_dim) * s * s / (a.causal ? 2.0 : 1.0);
}

struct AttentionPrediction {
    double predicted_s = 0, measured_s = 0;
};
AttentionPrediction attention_pass(const ChipSpec& chip, const AttentionSample& a, AttentionPassKind pass) {
    const bool forward = pass == AttentionPassKind::forward;
    const double flops = attention_forward_flops(a) * (forward ? 1.0 : kAttentionBackwardRatio);
    const double predicted = attention_time(chip, a.family, pass, flops, 0.0, static_cast<double>(a.seq)).lower_bound_s();
    return {predicted, forward ? a.forward_s : a.forward_backward_s - a.forward_s};
}

void add_residual(std::map<std::string, std::vector<double>>& parts, const std::string& part, double predicted, double measured) {
    parts[part].push_back(std::abs(predicted / measured - 1.0));
}

std::vector<PartResiduals> summarise(const std::map<std::string, std::vector<double>>& parts) {
    std::vector<PartResiduals> out;
    for (const auto& [part, errors] : parts)
        out.push_back({part, static_cast<int>(errors.size()), median(errors), *std::max_element(errors.begin(), errors.end())});
    return out;
}

// The measured dtypes in name order (the order of the search's parameters).
std::vector<Dtype> gemm_dtypes(const KernelMeasurements& m) {
    std::vector<Dtype> dtypes;
    for (const auto& g : m.gemms)
        if (std::find(dtypes.begin(), dtypes.end(), g.dtype) == dtypes.end()) dtypes.push_back(g.dtype);
    std::sort(dtypes.begin(), dtypes.end(), [](Dtype a, Dtype b) { return dtype_name(a) < dtype_name(b); });
    return dtypes;
}

void fit_gemms(const KernelMeasurements& m, ChipSpec& chip, const std::string& origin) {
    const std::vector<Dtype> dtypes = gemm_dtypes(m);
    for (Dtype dtype : dtypes)
        if (!chip.supports(dtype))
            throw InputError(origin, "gemm", "GEMMs measured in " + std::string(dtype_name(dtype)) + " but " + chip.name +
                                                 " gives no peak for that dtype");
    // Each dtype fits a share of peak and a row ramp: one row count cannot tell them apart.
    for (Dtype dtype : dtypes) {
        std::set<std::int64_t> rows;
        for (const auto& g : m.gemms)
            if (g.dtype == dtype) rows.insert(g.m);
        if (rows.size() < 2)
            throw InputError(origin, "gemm", std::string(dtype_name(dtype)) + " GEMMs measured at one row count (M): at least two are needed to fit its share of peak and its row ramp");
    }
    KernelModel& k = *chip.kernels;
    // x: launch_s, hbm_fraction, then peak_fraction and half_rows per dtype.
    const auto apply = [&](const std::vector<double>& x) {
        k.gemm_launch_s = x[0];
        k.gemm_hbm_fraction = x[1];
        for (std::size_t i = 0; i < dtypes.size(); ++i) k.gemm[index_of(dtypes[i])] = GemmKernel{x[2 + 2 * i], x[3 + 2 * i]};
    };
    const Loss loss = [&](const std::vector<double>& x) {
        if (!(x[0] >= kMinLaunch_s) || !(x[1] > 0 && x[1] <= 1)) return std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < dtypes.size(); ++i)
            if (!(x[2 + 2 * i] > 0 && x[2 + 2 * i] <= 1) || !(x[3 + 2 * i] >= kMinHalf)) return std::numeric_limits<double>::infinity();
        apply(x);
        double sum = 0;
        for (const auto& g : m.gemms) sum += log_ratio_squared(gemm_predicted_s(chip, g), g.time_s);
        return sum;
    };
    // Start: a few microseconds to launch, most of HBM and three quarters of peak, tiles of 64 rows.
    std::vector<double> start = {5e-6, 0.8};
    for (std::size_t i = 0; i < dtypes.size(); ++i) start.insert(start.end(), {0.75, 64.0});
    apply(minimise(loss, start));
}

void fit_attention(const KernelMeasurements& m, ChipSpec& chip, const std::string& origin) {
    std::vector<std::string> families;
    for (const auto& a : m.attention)
        if (std::find(families.begin(), families.end(), a.family) == families.end()) families.push_back(a.family);
    std::sort(families.begin(), families.end());
    // Each pass fits a share of peak and a sequence ramp: one sequence length cannot tell them apart.
    for (const std::string& family : families) {
        std::set<std::int64_t> seqs;
        for (const auto& a : m.attention)
            if (a.family == family) seqs.insert(a.seq);
        if (seqs.size() < 2)
            throw InputError(origin, "attention", family + " measured at one sequence length: at least two are needed to fit its share of peak and its sequence ramp");
    }
    auto& fitted = chip.kernels->attention;
    for (const std::string& family : families) {
        fitted.push_back({family, {0.5, 512.0}, {0.5, 512.0}});
        for (AttentionPassKind pass : {AttentionPassKind::forward, AttentionPassKind::backward}) {
            AttentionPass& p = pass == AttentionPassKind::forward ? fitted.back().forward : fitted.back().backward;
            const Loss loss = [&](const std::vector<double>& x) {
                if (!(x[0] > 0 && x[0] <= 1) || !(x[1] >= kMinHalf)) return std::numeric_limits<double>::infinity();
                p = {x[0], x[1]};
                double sum = 0;
                for (const auto& a : m.attention)
                    if (a.family == family) {
                        const AttentionPrediction t = attention_pass(chip, a, pass);
                        sum += log_ratio_squared(t.predicted_s, t.measured_s);
                    }
                return sum;
            };
            const std::vector<double> x = minimise(loss, {0.5, 512.0});
            p = {x[0], x[1]};
        }
    }
}

void fit_memory_bound(const KernelMeasurements& m, ChipSpec& chip, const std::string& origin) {
    const auto share = [&](const std::string& kernel, double rate_Bps) {
        const double fraction = rate_Bps / chip.hbm_bw_Bps;
        if (!(fraction > 0 && fraction <= 1))
            throw InputError(origin, kernel, "measured at " + std::to_string(rate_Bps / 1e12) + " TB/s, beyond " + chip.name +
                                                 "'s HBM bandwidth: is this the right chip?");
        chip.kernels->memory_bound.push_back({kernel, fraction});
    };
    std::map<std::string, std::vector<double>> rates;
    for (const auto& s : m.memory_bound) rates[s.kernel].push_back(s.bytes / s.seconds);
    for (const auto& [kernel, r] : rates)
        if (kernel != "copy") share(kernel, median(r));
    if (!m.copy_Bps.empty())
        share("copy", std::accumulate(m.copy_Bps.begin(), m.copy_Bps.end(), 0.0) / static_cast<double>(m.copy_Bps.size()));
}

}  // namespace

std::vector<PartResiduals> kernel_residuals(const KernelMeasurements& m, const ChipSpec& chip) {
    std::map<std::string, std::vector<double>> parts;
    for (const auto& g : m.gemms) add_residual(parts, "gemm " + std::string(dtype_name(g.dtype)), gemm_predicted_s(chip, g), g.time_s);
    for (const auto& a : m.attention)
        for (AttentionPassKind pass : {AttentionPassKind::forward, AttentionPassKind::backward}) {
            const AttentionPrediction t = attention_pass(chip, a, pass);
            add_residual(parts, "attention " + a.family + (pass == AttentionPassKind::forward ? " forward" : " backward"),
                         t.predicted_s, t.measured_s);
        }
    for (const auto& s : m.memory_bound)
        add_residual(parts, "memory " + s.kernel, memory_bound_s(chip, s.kernel, s.bytes), s.seconds);
    return summarise(parts);
}

std::vector<CasePrediction> predict_held_out_gemms(const KernelMeasurements& m, const ChipSpec& datasheet, const std::string& origin) {
    if (m.gemms.empty()) throw InputError(origin, "kernels.gemm", "no tensor-core GEMMs measured");
    const KernelGemmSample& last = m.gemms.back();
    const auto held_out = [&](const KernelGemmSample& g) { return g.k == last.k && g.n == last.n; };
    KernelMeasurements fitting = m;
    fitting.gemms.erase(std::remove_if(fitting.gemms.begin(), fitting.gemms.end(), held_out), fitting.gemms.end());
    if (fitting.gemms.empty())
        throw InputError(origin, "kernels.gemm", "one weight shape measured: none is left to hold out; give more time");
    ChipSpec chip = datasheet;
    chip.kernels = fit_kernels(fitting, datasheet, origin).model;
    std::vector<CasePrediction> cases;
    for (const KernelGemmSample& g : m.gemms) {
        if (!held_out(g)) continue;
        const RooflineTime t = gemm_time(chip, {static_cast<double>(g.m), static_cast<double>(g.k), static_cast<double>(g.n), 1,
                                                static_cast<double>(g.k * g.n)},
                                         {g.dtype, g.dtype, g.dtype});
        CasePrediction c;
        c.name = std::string(dtype_name(g.dtype)) + " GEMM " + std::to_string(g.m) + "x" + std::to_string(g.k) + "x" + std::to_string(g.n);
        c.predicted_s = t.lower_bound_s();
        c.measured_s = g.time_s;
        c.error = (c.predicted_s - c.measured_s) / c.measured_s;
        c.backend = "kernel model";
        c.bound = t.bound() == Bound::compute ? "compute" : "memory";
        cases.push_back(c);
    }
    return cases;
}

KernelFit fit_kernels(const KernelMeasurements& m, const ChipSpec& datasheet, const std::string& origin) {
    if (m.gemms.empty() && m.attention.empty() && m.memory_bound.empty() && m.copy_Bps.empty())
        throw InputError(origin, "gemm", "no kernel measurements to fit");
    ChipSpec chip = datasheet;
    chip.kernels = KernelModel{};
    chip.kernels->source = origin;
    if (!m.gemms.empty()) fit_gemms(m, chip, origin);
    if (!m.attention.empty()) fit_attention(m, chip, origin);
    fit_memory_bound(m, chip, origin);
    KernelFit fit;
    fit.model = *chip.kernels;
    fit.residuals = kernel_residuals(m, chip);
    return fit;
}

}  // namespace ridgeline::calibration
