#pragma once
// Shared helpers for the tests: where the repository is, and running the CLI.
#include <filesystem>
#include <string>

namespace ridgeline::test {

inline std::filesystem::path source_dir() { return RIDGELINE_SOURCE_DIR; }
inline std::filesystem::path data_file(const std::string& relative) { return source_dir() / "tests" / "data" / relative; }

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};
// Runs the ridgeline binary with `arguments` (already shell-quoted where needed).
CommandResult run_ridgeline(const std::string& arguments);

// Relative difference |actual - expected| / |expected|.
inline double relative_error(double actual, double expected) {
    const double scale = expected < 0 ? -expected : expected;
    const double diff = actual > expected ? actual - expected : expected - actual;
    return scale > 0 ? diff / scale : diff;
}

}  // namespace ridgeline::test
