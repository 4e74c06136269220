#pragma once
// Request traces (JSON Lines), streamed a line at a time: Ridgeline's own lines
//   {"arrival_s": 0.12, "input_tokens": 812, "output_tokens": 230}
// and the public Mooncake traces' lines
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
// (timestamp in milliseconds). The I/O edge: the simulator sees Requests.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>

#include "inference/load.hpp"

namespace ridgeline::io {

class TraceFile final : public RequestSource {
public:
    // `max_tokens`: the longest request (prompt and output) the model takes; 0 for no limit.
    TraceFile(const std::filesystem::path& path, std::int64_t max_tokens);
    // The next request; InputError naming the file, line and field for a line that is not JSON or
    // not UTF-8, a missing or non-positive length, an arrival before the previous one, a request longer
    // than the model's context.
    std::optional<Request> next() override;
    [[nodiscard]] std::string where(std::int64_t) const override { return path_.string() + ":" + std::to_string(line_); }

private:
    std::filesystem::path path_;
    std::ifstream in_;
    std::int64_t max_tokens_, line_ = 0;
    double last_arrival_s_ = 0;
};

}  // namespace ridgeline::io
