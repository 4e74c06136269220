#include "accuracy/like_runs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

namespace ridgeline {

std::string chip_family(const std::string& chip) {
    // Prefixes of the chip files' names, by the architecture whose kernels and clocks they share.
    static const std::array<std::pair<const char*, const char*>, 12> families = {{
        {"tpu", "tpu"}, {"gb", "blackwell"}, {"b2", "blackwell"}, {"b3", "blackwell"}, {"gh200", "hopper"}, {"h1", "hopper"},
        {"h2", "hopper"}, {"h8", "hopper"}, {"a100", "ampere"}, {"mi35", "cdna4"}, {"mi3", "cdna3"}, {"gaudi", "gaudi"}}};
    for (const auto& [prefix, family] : families)
        if (chip.rfind(prefix, 0) == 0) return family;
    return chip;
}

RunKind serving_run_kind(const std::string& engine, const std::string& chip_name, bool moe, std::int64_t chips) {
    return {engine.empty() ? "static model" : engine, chip_family(chip_name), moe, chips, "none"};
}

std::string scale_bucket(std::int64_t chips) {
    if (chips <= 64) return "1-64 chips";
    if (chips <= 512) return "65-512 chips";
    return "513+ chips";
}

int like_runs_needed(double level) {
    // The smallest and largest of n held-out factors bound a new run's with probability 1 - 2 / (n + 1).
    const double n = std::ceil(2.0 / (1.0 - level) - 1.0 - 1e-9);
    return std::max(kMinLikeRuns, static_cast<int>(std::min(n, 1e6)));
}

PredictionInterval prediction_interval(const std::vector<Residual>& residuals, const RunKind& kind, double level,
                                       const LeaveOut& leave_out, const std::string& quantity) {
    PredictionInterval interval;
    interval.level = level;
    using Match = std::function<bool(const RunKind&)>;
    const std::string params = kind.params == "none" ? std::string("no parameter fitted")
                               : "stack parameters: " + std::string(kind.params == "own"      ? "its own fit"
                                                                    : kind.params == "family" ? "its family's pooled fit"
                                                                                              : "the pooled fit of all stacks");
    const std::string load = kind.moe ? "MoE" : "dense";
    const auto same_core = [&](const RunKind& k) { return k.moe == kind.moe && k.params == kind.params; };
    const auto same_chip = [&](const RunKind& k) { return same_core(k) && k.chip_family == kind.chip_family; };
    const auto same_stack = [&](const RunKind& k) { return same_chip(k) && k.stack_family == kind.stack_family; };
    const std::vector<std::pair<std::string, Match>> levels = {
        {kind.stack_family + ", " + kind.chip_family + ", " + load + ", " + scale_bucket(kind.chips) + ", " + params,
         [&](const RunKind& k) { return same_stack(k) && scale_bucket(k.chips) == scale_bucket(kind.chips); }},
        {kind.stack_family + ", " + kind.chip_family + ", " + load + ", " + params, same_stack},
        {kind.chip_family + ", " + load + ", " + params, same_chip},
        {load + ", " + params, same_core},
    };
    const int needed = like_runs_needed(level);
    for (const auto& [like, match] : levels) {
        std::vector<double> factors;
        for (const Residual& r : residuals)
            if (r.quantity == quantity && !leave_out.drops(r) && match(r.kind)) factors.push_back(1.0 + r.error);
        if (static_cast<int>(factors.size()) < needed) continue;
        std::sort(factors.begin(), factors.end());
        // Split-conformal ranks: the k-th smallest and largest of n held-out factors bound a new
        // run's with probability at least 1 - 2k / (n + 1).
        const auto n = static_cast<double>(factors.size());
        // (1 - 0.9 is not 0.1 in binary: a hair keeps floor() from losing a whole rank.)
        const auto k = static_cast<std::size_t>(std::max(1.0, std::floor(0.5 * (1.0 - level) * (n + 1.0) + 1e-9)));
        interval.available = true;
        interval.low_factor = factors[k - 1];
        interval.high_factor = factors[factors.size() - k];
        interval.runs = static_cast<int>(factors.size());
        interval.like = like;
        return interval;
    }
    if (std::none_of(residuals.begin(), residuals.end(), [&](const Residual& r) { return r.quantity == quantity; })) {
        interval.why_none = "the data folder has no held-out residuals of such runs (accuracy/): no interval is given";
        return interval;
    }
    interval.why_none = "fewer than " + std::to_string(needed) + " held-out runs like it (" + load + ", " + params +
                        "): no interval is given";
    return interval;
}

}  // namespace ridgeline
