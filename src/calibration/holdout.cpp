#include "calibration/holdout.hpp"

#include <algorithm>
#include <cmath>

#include "collective/link_bytes.hpp"
#include "engine/roofline.hpp"
#include "hardware/measured_range.hpp"
#include "topology/cluster.hpp"

namespace ridgeline::calibration {

CaseTime predict_case(const ChipSpec& chip, const ShardedCase& c) {
    const CaseWork work = case_work(c);
    CaseTime time;
    for (const DeviceGemm& g : work.gemms)
        time.compute_s += gemm_time(chip, {g.m, g.k, g.n, 1, g.k * g.n}, {Dtype::fp32, Dtype::fp32, Dtype::fp32}).lower_bound_s() +
                          chip.efficiency.kernel_overhead_s;
    if (!work.collectives.empty()) {
        // The devices of one run form one switched level: the model's NVLink domain.
        Cluster cluster;
        cluster.name = chip.name;
        cluster.chip_name = chip.name;
        const NvlinkSpec link = chip.nvlink.value_or(NvlinkSpec{1, chip.hbm_bw_Bps, 0});
        cluster.dims.push_back(make_switched_dim("devices", c.devices, link.bw_per_chip_Bps_one_way, link.hop_latency_s));
        const std::vector<GroupDim> group = {GroupDim{0, c.devices, 1}};
        for (const DeviceCollective& collective : work.collectives)
            time.communication_s +=
                collective_cost(cluster, group, collective.kind, collective_link_bytes(chip, collective.kind, collective.bytes)).time_s();
    }
    return time;
}

std::vector<CasePrediction> predict_holdout(const ChipSpec& chip, const Measurements& measurements) {
    std::vector<CasePrediction> cases;
    for (const ShardedSample& sample : measurements.sharded) {
        const CaseTime time = predict_case(chip, sample.shape);
        CasePrediction p;
        p.name = sample.shape.name();
        p.devices = sample.shape.devices;
        p.backend = measurements.provenance.backend;
        p.predicted_s = time.total_s();
        p.measured_s = sample.time_s;
        p.error = (p.predicted_s - p.measured_s) / p.measured_s;
        p.bound = time.communication_s > time.compute_s ? "communication" : "compute";
        const CaseWork work = case_work(sample.shape);
        double low = INFINITY, high = 0;
        for (const DeviceGemm& g : work.gemms) {
            low = std::min({low, g.m, g.k, g.n});
            high = std::max({high, g.m, g.k, g.n});
        }
        p.warnings = measured_range_warnings(chip, low, high, 0, sample.shape.devices);
        for (const DeviceCollective& collective : work.collectives)
            for (auto& w : measured_range_warnings(chip, 0, 0, collective.bytes, 0)) p.warnings.push_back(w);
        cases.push_back(p);
    }
    return cases;
}

HoldoutSummary summarize(const std::vector<CasePrediction>& cases) {
    HoldoutSummary summary;
    summary.count = static_cast<int>(cases.size());
    if (cases.empty()) return summary;
    std::vector<double> errors;
    for (const CasePrediction& c : cases) errors.push_back(std::abs(c.error));
    std::sort(errors.begin(), errors.end());
    const std::size_t mid = errors.size() / 2;
    summary.median_abs_error = errors.size() % 2 == 1 ? errors[mid] : 0.5 * (errors[mid - 1] + errors[mid]);
    summary.max_abs_error = errors.back();
    return summary;
}

}  // namespace ridgeline::calibration
