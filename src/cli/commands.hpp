#pragma once
// Each subcommand registers itself on the app; its callback loads inputs, calls the engine and
// prints one report (table, or JSON with --json). Errors propagate to main as exceptions.
#include <cstdint>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

namespace ridgeline::cli {

// Chip counts one `search --chips` range may hold: each count is a search of its own.
inline constexpr std::int64_t kMaxChipCounts = 1'000;

struct GlobalOptions {
    std::filesystem::path data_dir;  // holds hardware/ and models/
};

void add_model_command(CLI::App& app, const GlobalOptions& options);
void add_roofline_command(CLI::App& app, const GlobalOptions& options);
void add_catalog_commands(CLI::App& app, const GlobalOptions& options);
void add_topology_command(CLI::App& app, const GlobalOptions& options);
void add_collective_command(CLI::App& app, const GlobalOptions& options);
void add_train_command(CLI::App& app, const GlobalOptions& options);
void add_validate_command(CLI::App& app, const GlobalOptions& options);
// Under `search`: the parent command holds one subcommand per kind of job.
void add_search_train_command(CLI::App& search, const GlobalOptions& options);
void add_serve_command(CLI::App& app, const GlobalOptions& options);
// `search serve`, registered on the `search` parent command.
void add_search_serve_command(CLI::App& search, const GlobalOptions& options);
// Calibration on the hardware at hand, and fitting its measurements.
void add_calibrate_command(CLI::App& app, const GlobalOptions& options);
void add_fit_command(CLI::App& app, const GlobalOptions& options);

}  // namespace ridgeline::cli
