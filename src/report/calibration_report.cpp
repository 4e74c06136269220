#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "report/calibration_reports.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {

using nlohmann::ordered_json;
using calibration::CalibrationFit;
using calibration::Residuals;

std::string percent(double fraction) { return fixed(100.0 * fraction, 1) + "%"; }

std::string residual_text(const Residuals& r) {
    return std::to_string(r.samples) + " samples, rms residual " + percent(r.rms) + ", max " + percent(r.max);
}

ordered_json sourced(double value, const std::string& source) { return {{"value", value}, {"source", source}}; }

}  // namespace

std::string fitted_chip_json(const ChipSpec& chip, const CalibrationFit& fit, const calibration::Provenance& provenance,
                             const std::string& origin, const std::string& system) {
    const std::string by = "fitted by ridgeline fit from " + origin + " (" + provenance.backend + " backend, " +
                           provenance.host + ", " + provenance.date + "): ";
    const std::string gemm = by + "least squares over GEMMs, " + residual_text(fit.gemm.residuals);
    const std::string copy = by + "alpha-beta least squares over copies (bytes read plus written), " + residual_text(fit.copy.residuals);
    const std::string link = fit.link.residuals.samples > 0
                                 ? by + "least squares per collective kind, streaming and cached messages apart; the fastest kind's "
                                        "streaming bandwidth, the median ring-step latency; all collectives: " +
                                       residual_text(fit.link.residuals)
                                 : "not measured (one device): the copy bandwidth stands in";
    ordered_json doc;
    doc["schema"] = "ridgeline.chip/1";
    doc["name"] = chip.name;
    doc["aliases"] = ordered_json::array();
    doc["description"] = chip.description;
    doc["kind"] = "gpu";
    if (!system.empty()) doc["default_system"] = system;
    doc["peak_flops_per_s"]["fp32"] = sourced(chip.peak_flops(Dtype::fp32), gemm + "; the throughput large fp32 GEMMs approach");
    doc["peak_flops_per_s"]["bf16"] = sourced(chip.peak_flops(Dtype::bf16), "set to the fp32 figure: the calibration backends compute in fp32");
    doc["hbm_bytes"] = sourced(chip.hbm_bytes, provenance.device.empty() ? "host memory (MemTotal in /proc/meminfo) on " + provenance.host
                                                                           : provenance.device + "'s memory, as the device reports it");
    doc["hbm_bw_Bps"] = sourced(chip.hbm_bw_Bps, copy);
    doc["on_chip_memory_bytes"] = sourced(chip.on_chip_memory_bytes,
                                          provenance.device.empty() ? "each of the " + std::to_string(provenance.devices) +
                                                                          " devices' share of the last-level cache of " +
                                                                          provenance.cpu_model + " (sysfs)"
                                                                    : provenance.device + "'s L2 cache, as the device reports it");
    doc["host_link_Bps"] = sourced(chip.host_link_Bps, "host memory itself: the fitted copy bandwidth");
    const NvlinkSpec& nvlink = *chip.nvlink;
    doc["interconnect"]["nvlink"] = {
        {"links_per_chip", sourced(1, "one link per device: the calibrated group is one flat level")},
        {"bw_per_chip_Bps_one_way", sourced(nvlink.bw_per_chip_Bps_one_way, link)},
        {"hop_latency_s", sourced(nvlink.hop_latency_s, link + "; latency per ring step")}};
    doc["interconnect"]["scale_out"] = {{"kind", chip.scale_out.kind},
                                        {"bw_per_chip_Bps_one_way", sourced(chip.scale_out.bw_per_chip_Bps_one_way, "not measured: the calibrated level repeated")},
                                        {"latency_s", sourced(chip.scale_out.latency_s, "not measured: the calibrated level repeated")}};
    auto& e = doc["efficiency"];
    e["origin"] = by.substr(0, by.size() - 2);
    e["matmul_max"] = sourced(1.0, "1 by construction: the fp32 peak is the fitted asymptote of large GEMMs");
    if (chip.efficiency.matmul_half_dim > 0) e["matmul_half_dim"] = sourced(chip.efficiency.matmul_half_dim, gemm);
    e["hbm"] = sourced(1.0, "1 by construction: the memory bandwidth is the fitted copy bandwidth");
    e["collective"] = sourced(1.0, "1 by construction: the link bandwidth is the fitted collective bandwidth");
    if (chip.efficiency.kernel_overhead_s > 0) e["kernel_overhead_s"] = sourced(chip.efficiency.kernel_overhead_s, gemm);
    e["matmul_output_passes"] = sourced(chip.efficiency.matmul_output_passes, gemm);
    if (!fit.collectives.empty()) {
        auto& kinds = e["collective_kinds"];
        for (const auto& c : fit.collectives) {
            const auto k = static_cast<std::size_t>(c.kind);
            kinds[collective_name(c.kind)] = {{"streaming", chip.efficiency.collective_streaming[k]},
                                              {"cached", chip.efficiency.collective_cached[k]}};
        }
        kinds["source"] = link;
    }
    const MeasuredRange& r = fit.range;
    doc["measured_range"] = {{"gemm_dim_min", r.gemm_dim_min},
                             {"gemm_dim_max", r.gemm_dim_max},
                             {"message_bytes_min", r.message_bytes_min},
                             {"message_bytes_max", r.message_bytes_max},
                             {"devices_max", r.devices_max},
                             {"source", "the shapes and sizes measured in " + origin}};
    auto& calibration = doc["calibration"];
    calibration["measurements"] = origin;
    calibration["libraries"] = provenance.libraries;
    calibration["cpu_model"] = provenance.cpu_model;
    calibration["gemm"] = {{"peak_flops_per_s", fit.gemm.peak_flops_per_s}, {"half_dim", fit.gemm.half_dim},
                           {"output_passes", fit.gemm.output_passes}, {"overhead_s", fit.gemm.overhead_s},
                           {"rms_residual", fit.gemm.residuals.rms},
                           {"max_residual", fit.gemm.residuals.max}, {"samples", fit.gemm.residuals.samples}};
    calibration["collectives"] = ordered_json::array();
    for (const auto& c : fit.collectives)
        calibration["collectives"].push_back({{"kind", collective_name(c.kind)},
                                              {"devices", c.devices},
                                              {"alpha_s", c.latency_s},
                                              {"streaming_bandwidth_Bps", 1.0 / c.streaming_s_per_byte},
                                              {"cached_bandwidth_Bps", 1.0 / c.cached_s_per_byte},
                                              {"rms_residual", c.residuals.rms},
                                              {"max_residual", c.residuals.max},
                                              {"samples", c.residuals.samples}});
    return doc.dump(2) + "\n";
}

std::string fit_table(const ChipSpec& chip, const CalibrationFit& fit) {
    Table table({"parameter", "value", "fit (relative residuals)"});
    table.add_row({"fp32 peak (large GEMMs)", si(chip.peak_flops(Dtype::fp32), "FLOP/s"), residual_text(fit.gemm.residuals)});
    table.add_row({"matmul_half_dim", fixed(fit.gemm.half_dim, 1), ""});
    table.add_row({"GEMM output passes over memory", fixed(fit.gemm.output_passes, 1), ""});
    table.add_row({"kernel overhead", seconds(fit.gemm.overhead_s), ""});
    table.add_row({"memory bandwidth (copy)", si(chip.hbm_bw_Bps, "B/s"), residual_text(fit.copy.residuals)});
    if (fit.link.residuals.samples > 0)
        table.add_row({"link (fastest kind, streaming)", si(chip.nvlink->bw_per_chip_Bps_one_way, "B/s") + ", " + seconds(chip.nvlink->hop_latency_s) + "/hop",
                       residual_text(fit.link.residuals)});
    for (const auto& c : fit.collectives)
        table.add_row({std::string(collective_name(c.kind)) + " x" + std::to_string(c.devices),
                       "alpha " + seconds(c.latency_s) + ", " + si(1.0 / c.streaming_s_per_byte, "B/s") + " streaming, " +
                           si(1.0 / c.cached_s_per_byte, "B/s") + " cached",
                       residual_text(c.residuals)});
    return table.render();
}

namespace {

// Four significant digits: a fitted parameter is not known better than that.
double rounded(double x) {
    if (x == 0) return 0;
    const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::abs(x))));
    return std::round(x * scale) / scale;
}

std::string residual_of(const calibration::KernelFit& fit, const std::string& part) {
    for (const auto& r : fit.residuals)
        if (r.part == part)
            return std::to_string(r.samples) + " samples, median |error| " + percent(r.median_abs) + ", max " + percent(r.max_abs);
    return "";
}

}  // namespace

std::string measured_chip_json(const ordered_json& like, const calibration::KernelFit& fit, const MeasuredChip& what) {
    const calibration::KernelMeasurements& m = what.measured;
    const std::string by = "measured: fitted by ridgeline fit to " + what.origin + " (" + m.device +
                           (m.software.empty() ? "" : "; " + m.software) + (m.date.empty() ? "" : "; " + m.date) + ")";
    const std::string like_name = like.value("name", "");
    ordered_json doc = like;
    doc["name"] = what.name;
    doc["aliases"] = ordered_json::array();
    doc["description"] = like.value("description", like_name) + ", kernels measured on " + m.device;
    if (!what.system.empty()) doc["default_system"] = what.system;
    if (what.device_memory_bytes > 0) doc["hbm_bytes"] = sourced(what.device_memory_bytes, m.device + "'s memory, as the device reports it");

    const KernelModel& k = fit.model;
    ordered_json kernels = like.contains("kernels") ? like["kernels"] : ordered_json::object();
    kernels["source"] = by;
    if (!m.gemms.empty()) {
        ordered_json gemm;
        std::string residuals;
        for (const auto& r : fit.residuals)
            if (r.part.rfind("gemm ", 0) == 0) residuals += "; " + r.part.substr(5) + ": " + residual_of(fit, r.part);
        gemm["source"] = by + residuals;
        gemm["launch_s"] = rounded(k.gemm_launch_s);
        gemm["hbm_fraction"] = rounded(k.gemm_hbm_fraction);
        for (std::size_t i = 0; i < kDtypeCount; ++i)
            if (const auto& g = k.gemm[i])
                gemm["dtypes"][std::string(dtype_name(static_cast<Dtype>(i)))] = {{"peak_fraction", rounded(g->peak_fraction)},
                                                                                   {"half_rows", rounded(g->half_rows)}};
        kernels["gemm"] = gemm;
    }
    for (const AttentionFamily& f : k.attention) {
        ordered_json family;
        family["source"] = by + ": forward " + residual_of(fit, "attention " + f.name + " forward") + "; backward " +
                           residual_of(fit, "attention " + f.name + " backward");
        for (auto [pass, p] : {std::pair{"forward", &f.forward}, std::pair{"backward", &f.backward}})
            family[pass] = {{"peak_fraction", rounded(p->peak_fraction)}, {"half_seq", rounded(p->half_seq)}};
        kernels["attention"][f.name] = family;
    }
    if (!kernels.contains("attention")) kernels["attention"] = ordered_json::object();
    for (const MemoryBoundKernel& b : k.memory_bound) kernels["memory_bound"][b.name] = rounded(b.hbm_fraction);
    if (!kernels.contains("memory_bound")) kernels["memory_bound"] = ordered_json::object();
    // Parts the measurements left out keep the datasheet chip's values: say so where there are any.
    const auto measured = [](const auto& parts, const std::string& name) {
        return std::any_of(parts.begin(), parts.end(), [&](const auto& p) { return p.name == name; });
    };
    bool kept = m.gemms.empty();
    for (const auto& entry : kernels["attention"].items())
        kept = kept || (entry.key() != "source" && !measured(k.attention, entry.key()));
    for (const auto& entry : kernels["memory_bound"].items())
        kept = kept || (entry.key() != "source" && !measured(k.memory_bound, entry.key()));
    if (kept) kernels["source"] = by + "; parts not measured there are " + like_name + "'s, each with its own source";
    doc["kernels"] = kernels;
    return doc.dump(2) + "\n";
}

std::string kernel_fit_table(const calibration::KernelFit& fit) {
    const KernelModel& k = fit.model;
    Table table({"part", "fitted", "measured against predicted"});
    for (std::size_t i = 0; i < kDtypeCount; ++i)
        if (const auto& g = k.gemm[i]) {
            const std::string dtype(dtype_name(static_cast<Dtype>(i)));
            table.add_row({"GEMM " + dtype, fixed(100 * g->peak_fraction, 1) + "% of peak, half at " + fixed(g->half_rows, 1) + " rows",
                           residual_of(fit, "gemm " + dtype)});
        }
    if (k.gemm_launch_s > 0)
        table.add_row({"GEMM launch, weight streaming", seconds(k.gemm_launch_s) + ", " + fixed(100 * k.gemm_hbm_fraction, 1) + "% of HBM", ""});
    for (const AttentionFamily& f : k.attention)
        for (auto [pass, p] : {std::pair{"forward", &f.forward}, std::pair{"backward", &f.backward}})
            table.add_row({"attention " + f.name + " " + pass,
                           fixed(100 * p->peak_fraction, 1) + "% of bf16 peak, half at seq " + fixed(p->half_seq, 0),
                           residual_of(fit, "attention " + f.name + " " + pass)});
    for (const MemoryBoundKernel& b : k.memory_bound)
        table.add_row({b.name, fixed(100 * b.hbm_fraction, 1) + "% of HBM", residual_of(fit, "memory " + b.name)});
    return table.render();
}

std::string holdout_table(const std::vector<calibration::CasePrediction>& cases, const calibration::HoldoutSummary& summary) {
    Table table({"held-out case", "bound", "predicted", "measured", "error"});
    for (const auto& c : cases)
        table.add_row({c.name, c.bound, seconds(c.predicted_s), seconds(c.measured_s), (c.error >= 0 ? "+" : "") + percent(c.error)});
    std::string text = table.render();
    text += std::to_string(summary.count) + " held-out cases: median |error| " + percent(summary.median_abs_error) +
            ", max |error| " + percent(summary.max_abs_error) + "\n";
    return text;
}

std::string holdout_json(const std::vector<calibration::CasePrediction>& cases, const calibration::HoldoutSummary& summary,
                         const std::string& measurements_path, const std::string& hardware_path) {
    ordered_json doc;
    doc["schema"] = "ridgeline.calibration-validation/1";
    doc["measurements"] = measurements_path;
    doc["hardware"] = hardware_path;
    doc["cases"] = ordered_json::array();
    for (const auto& c : cases)
        doc["cases"].push_back({{"name", c.name},
                                {"devices", c.devices},
                                {"backend", c.backend},
                                {"bound", c.bound},
                                {"predicted_s", c.predicted_s},
                                {"measured_s", c.measured_s},
                                {"error", c.error},
                                {"warnings", c.warnings}});
    doc["summary"] = {{"count", summary.count},
                      {"median_abs_error", summary.median_abs_error},
                      {"max_abs_error", summary.max_abs_error}};
    return doc.dump(2) + "\n";
}

}  // namespace ridgeline::report
