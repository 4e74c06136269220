#pragma once
// Every numeric flag of every command refuses what CLI11 would read as a number but is not one
// people mean: NaN and infinities (which pass range checks, NaN comparing false) and integers with a
// leading zero (read as octal by C's strtol: --tp 010 would be 8); every flag that takes a value
// refuses an empty one.
#include <CLI/CLI.hpp>

namespace ridgeline::cli {

// Adds the check to every option of `app` and its subcommands whose type is a number.
void check_numeric_flags(CLI::App& app);

}  // namespace ridgeline::cli
