#pragma once
// --from FRAMEWORK FILE [--strict]: a plan read from an existing launch configuration, on train and
// search train.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "from/launch_config.hpp"

namespace ridgeline::cli {

struct FromFlags {
    std::vector<std::string> from;  // framework, file
    bool strict = false;
};

// `what` ends the --from help: what the command does with the file's plan.
void add_from_flags(CLI::App& command, FromFlags& flags, const std::string& what);

// The file's plan; the settings it gives that change nothing modelled are one note on stderr, or
// with --strict an InputError naming them.
[[nodiscard]] LaunchConfig read_from_flags(const FromFlags& flags, const std::filesystem::path& data_dir, const ModelSpec& model,
                                           std::int64_t chips);

}  // namespace ridgeline::cli
