#pragma once
// --emit FRAMEWORK (and --emit-top K on the searches): print the plan as that framework's launch
// configuration instead of the report.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "emit/emitter_spec.hpp"

namespace ridgeline::cli {

struct EmitFlags {
    std::string framework;
    std::size_t top = 1;
};

// `job` names the frameworks the command takes in the help; `top`: also --emit-top.
void add_emit_flags(CLI::App& command, EmitFlags& flags, EmitJob job, bool top);

// The framework's names, when --emit was given (nullopt otherwise). InputError naming --emit with
// --json (a configuration or a report, not both) and for --emit-top without --emit.
[[nodiscard]] std::optional<EmitterSpec> emit_spec(const CLI::App& command, const EmitFlags& flags, bool json,
                                                   const std::filesystem::path& data_dir);

}  // namespace ridgeline::cli
