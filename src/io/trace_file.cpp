#include "io/trace_file.hpp"

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace ridgeline::io {

namespace {

constexpr std::size_t kMaxLineBytes = 1 << 20;  // a Mooncake line with its block hashes is a few KB
constexpr double kMaxArrivalS = 366 * 86400.0;   // a serving trace covers hours or days, never years

}  // namespace

TraceFile::TraceFile(const std::filesystem::path& path, std::int64_t max_tokens)
    : path_(path), in_(path, std::ios::binary), max_tokens_(max_tokens) {
    if (!in_) throw InputError(path.string(), "", "cannot open the trace");
}

std::optional<Request> TraceFile::next() {
    std::string line;
    while (std::getline(in_, line)) {
        ++line_;
        const std::string where = path_.string() + ":" + std::to_string(line_);
        if (line.size() > kMaxLineBytes) throw InputError(where, "", "a line longer than 1 MiB");
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        nlohmann::json doc;
        try {
            doc = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception& e) {
            throw InputError(where, "", std::string("not a JSON line (truncated, or not UTF-8?): ") + e.what());
        }
        if (!doc.is_object()) throw InputError(where, "", "expected one JSON object a line");
        const bool mooncake = doc.contains("timestamp");
        const char* arrival_key = mooncake ? "timestamp" : "arrival_s";
        const char* input_key = mooncake ? "input_length" : "input_tokens";
        const char* output_key = mooncake ? "output_length" : "output_tokens";
        const auto number = [&](const char* key) {
            if (!doc.contains(key)) throw InputError(where, key, "missing");
            const auto& value = doc[key];
            if (!value.is_number()) throw InputError(where, key, "expected a number");
            const double x = value.get<double>();
            if (!std::isfinite(x) || x < 0) throw InputError(where, key, "expected a finite number at least 0");
            return x;
        };
        const auto length = [&](const char* key) {
            const double x = number(key);
            if (x < 1 || x != std::floor(x) || x > 1e9) throw InputError(where, key, "expected a whole number of tokens, at least 1");
            return static_cast<std::int64_t>(x);
        };
        Request r;
        r.arrival_s = number(arrival_key) * (mooncake ? 1e-3 : 1.0);
        if (r.arrival_s > kMaxArrivalS) throw InputError(where, arrival_key, "arrives more than a year after the trace starts");
        r.input_tokens = length(input_key);
        r.output_tokens = length(output_key);
        if (r.arrival_s < last_arrival_s_)
            throw InputError(where, arrival_key, "arrives before the line above it: a trace is in arrival order");
        if (max_tokens_ > 0 && r.input_tokens + r.output_tokens > max_tokens_)
            throw InputError(where, input_key, std::to_string(r.input_tokens + r.output_tokens) + " tokens exceed the model's context of " +
                                                   std::to_string(max_tokens_));
        last_arrival_s_ = r.arrival_s;
        return r;
    }
    if (in_.bad()) throw InputError(path_.string(), "", "reading the trace failed");
    return std::nullopt;
}

}  // namespace ridgeline::io
