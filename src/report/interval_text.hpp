#pragma once
// Prediction intervals as text and JSON. An interval's factors are on a time (measured / predicted):
// a time's bounds are its value times them, a throughput's its value divided by them.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "accuracy/like_runs.hpp"

namespace ridgeline::report {

// "5.800 s - 7.900 s" (none available: "none").
[[nodiscard]] std::string time_range_text(double time_s, const PredictionInterval& interval);
// {available, level, low_s, high_s, held_out_runs, like}, or {available: false, why_none}.
[[nodiscard]] nlohmann::json time_interval_json(double time_s, const PredictionInterval& interval);
// A predicted latency's interval: its value divided by the factors (predicted / measured latency).
[[nodiscard]] std::string latency_range_text(double latency_s, const PredictionInterval& interval);
[[nodiscard]] nlohmann::json latency_interval_json(double latency_s, const PredictionInterval& interval);
// "1.815 K tokens/s"
[[nodiscard]] std::string tokens_per_s_text(double tokens_per_s);
// "252.9 - 512.6 tokens/s" (none available: "-").
[[nodiscard]] std::string throughput_range_text(double tokens_per_s, const PredictionInterval& interval);
// {available, level, low/high_output_tokens_per_s, held_out_runs, like}, or {available: false, why_none}.
[[nodiscard]] nlohmann::json throughput_interval_json(double tokens_per_s, const PredictionInterval& interval);

}  // namespace ridgeline::report
