#include "cli/progress.hpp"

#include "cli/interrupt.hpp"

#include <iostream>

#include <unistd.h>

#include "report/table.hpp"

namespace ridgeline::cli {

void add_progress_flag(CLI::App& command, bool& progress) {
    command.add_flag("--progress", progress, "progress on stderr even when it is not a terminal");
}

ProgressLine::ProgressLine(bool forced)
    : enabled_(forced || ::isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressLine::finish() {
    if (drawn_) std::cerr << "\n";
    drawn_ = false;
    enabled_ = false;
}

void ProgressLine::step(const std::string& text) {
    if (enabled_) std::cerr << text << "\n";
}

void ProgressLine::update(double done, double total, const std::string& what, double count, const std::string& count_unit) {
    stop_if_interrupted();  // every long command reports progress: the host's Ctrl-C is heard here
    if (!enabled_ || total <= 0) return;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed_s = std::chrono::duration<double>(now - start_).count();
    if (elapsed_s < 1.0 || (drawn_ && now - last_drawn_ < std::chrono::milliseconds(250))) return;
    last_drawn_ = now;
    const double share = std::min(done / total, 1.0);
    const std::string left = share > 0 ? report::fixed(elapsed_s * (1.0 - share) / share, 0) + " s left" : "";
    std::cerr << "\r" << report::fixed(100.0 * share, 0) << "% (" << what << ", " << report::si(count / elapsed_s, count_unit + "/s") << ", "
              << left << ")   " << std::flush;
    drawn_ = true;
}

}  // namespace ridgeline::cli
