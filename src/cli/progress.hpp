#pragma once
// Progress of a long command on stderr (never stdout): shown once a second has passed, when
// stderr is a terminal or --progress was given, as one line rewritten in place with the share
// done, the rate and the time left.
#include <chrono>
#include <string>

#include <CLI/CLI.hpp>

namespace ridgeline::cli {

void add_progress_flag(CLI::App& command, bool& progress);

class ProgressLine {
public:
    explicit ProgressLine(bool forced);
    ~ProgressLine() { finish(); }
    void finish();  // ends the line it drew, if any
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;
    // `done` of `total` (any unit), with `what` ("12.3 M plans") and the rate of `count` per second.
    // Throws Interrupted when the host asks the command to stop (cli/interrupt.hpp).
    void update(double done, double total, const std::string& what, double count, const std::string& count_unit);
    // One finished step, as a line of its own (shown under the same rule, from the start).
    void step(const std::string& text);

private:
    bool enabled_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_, last_drawn_;
};

}  // namespace ridgeline::cli
