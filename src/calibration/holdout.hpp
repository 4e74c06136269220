#pragma once
// Validation on held-out cases: each measured sharded matmul or MLP block is predicted by the cost
// engine (matmul_efficiency for GEMMs, collective_cost for collectives) from a chip description,
// and compared with what was measured. Pure.
#include <string>
#include <vector>

#include "calibration/measurements.hpp"
#include "hardware/chip.hpp"

namespace ridgeline::calibration {

struct CasePrediction {
    std::string name;
    int devices = 1;
    std::string backend;
    double predicted_s = 0;
    double measured_s = 0;
    double error = 0;             // (predicted - measured) / measured
    std::string bound;            // "compute" or "communication": the larger predicted part
    std::vector<std::string> warnings;  // outside the chip's measured range
};

struct HoldoutSummary {
    int count = 0;
    double median_abs_error = 0;
    double max_abs_error = 0;
};

// The engine's time for one case: GEMMs at fp32 (compute or memory bound, whichever is slower,
// plus the kernel overhead) and the collectives on one switched level of c.devices devices, in sequence.
struct CaseTime {
    double compute_s = 0;
    double communication_s = 0;
    [[nodiscard]] double total_s() const { return compute_s + communication_s; }
};
[[nodiscard]] CaseTime predict_case(const ChipSpec& chip, const ShardedCase& c);

[[nodiscard]] std::vector<CasePrediction> predict_holdout(const ChipSpec& chip, const Measurements& measurements);
[[nodiscard]] HoldoutSummary summarize(const std::vector<CasePrediction>& cases);

}  // namespace ridgeline::calibration
