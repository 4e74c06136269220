#pragma once
// A serving throughput's prediction interval as text and JSON. The interval's factors are on the
// time per token (measured / predicted), so a throughput's bounds are its value divided by them.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "accuracy/like_runs.hpp"

namespace ridgeline::report {

// "1.815 K tokens/s"
[[nodiscard]] std::string tokens_per_s_text(double tokens_per_s);
// "252.9 - 512.6 tokens/s" (none available: "-").
[[nodiscard]] std::string throughput_range_text(double tokens_per_s, const PredictionInterval& interval);
// {available, level, low/high_output_tokens_per_s, held_out_runs, like}, or {available: false, why_none}.
[[nodiscard]] nlohmann::json throughput_interval_json(double tokens_per_s, const PredictionInterval& interval);

}  // namespace ridgeline::report
