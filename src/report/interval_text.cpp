#include "report/interval_text.hpp"

#include <nlohmann/json.hpp>

#include "report/table.hpp"

namespace ridgeline::report {

namespace {

// si() without the space it leaves for a unit when there is no prefix.
std::string number(double value) {
    std::string text = si(value);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
}

// {available, level, <key>_low/high ..., held_out_runs, like}, or why there is none.
nlohmann::json bounds_json(const char* low_key, double low, const char* high_key, double high, const PredictionInterval& i) {
    if (!i.available) return {{"available", false}, {"why_none", i.why_none}};
    return {{"available", true}, {"level", i.level}, {low_key, low}, {high_key, high}, {"held_out_runs", i.runs}, {"like", i.like}};
}

}  // namespace

std::string time_range_text(double time_s, const PredictionInterval& i) {
    return i.available ? seconds(time_s * i.low_factor) + " - " + seconds(time_s * i.high_factor) : "none";
}

nlohmann::json time_interval_json(double time_s, const PredictionInterval& i) {
    return bounds_json("low_s", time_s * i.low_factor, "high_s", time_s * i.high_factor, i);
}

std::string latency_range_text(double latency_s, const PredictionInterval& i) {
    return i.available ? seconds(latency_s / i.high_factor) + " - " + seconds(latency_s / i.low_factor) : "none";
}

nlohmann::json latency_interval_json(double latency_s, const PredictionInterval& i) {
    return bounds_json("low_s", latency_s / i.high_factor, "high_s", latency_s / i.low_factor, i);
}

std::string tokens_per_s_text(double tokens_per_s) { return number(tokens_per_s) + " tokens/s"; }

std::string throughput_range_text(double tokens_per_s, const PredictionInterval& i) {
    if (!i.available) return "-";
    return number(tokens_per_s / i.high_factor) + " - " + tokens_per_s_text(tokens_per_s / i.low_factor);
}

nlohmann::json throughput_interval_json(double tokens_per_s, const PredictionInterval& i) {
    return bounds_json("low_output_tokens_per_s", tokens_per_s / i.high_factor, "high_output_tokens_per_s", tokens_per_s / i.low_factor, i);
}

}  // namespace ridgeline::report
