#pragma once
// The command tree and the one place a run's errors become exit codes and one-line messages,
// shared by the executable (main.cpp) and the Python module (python/module.cpp).
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

namespace ridgeline::cli {

struct App {
    GlobalOptions options;  // the commands' callbacks hold a reference: it lives beside them
    CLI::App root{"Ridgeline: roofline and scaling cost model for LLMs on TPU and GPU clusters"};
};

// Every command registered; the data folder from RIDGELINE_DATA_DIR or `default_data_dir`.
[[nodiscard]] std::unique_ptr<App> make_app(const std::string& default_data_dir);

struct RunOutcome {
    int exit_code = 0;       // 0 success, 2 bad input, 1 internal error
    std::string error;       // the one line printed after "error: " (or "internal error: ")
};

// Parses `args` (without the program name) and runs the command. Help is printed to stdout
// (exit 0); warnings go to stderr.
[[nodiscard]] RunOutcome run_app(App& app, const std::vector<std::string>& args);

}  // namespace ridgeline::cli
