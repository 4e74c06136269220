#pragma once
// `--set PATH=VALUE` and `--price`, shared by every command that takes hardware, and
// `--memory-margin` (the HBM a plan may use shrinks by that share): applied to the resolved chip
// and system before anything is built from them, and echoed in the report (a line above the
// table, an "overrides" list in the JSON).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hardware/settings.hpp"

namespace ridgeline::cli {

struct WhatIfFlags {
    std::vector<std::string> set;
    std::string price;  // shortcut for --set chip.price_usd_per_chip_hour=...
    double memory_margin = 0;  // share of HBM kept free: plans must fit in the rest
};

void add_what_if_flags(CLI::App& command, WhatIfFlags& flags);
// --memory-margin, for the commands that decide whether a plan fits (train, serve and the searches).
void add_memory_margin_flag(CLI::App& command, WhatIfFlags& flags);

// InputError naming --set (or --price) and the path when a setting cannot apply.
[[nodiscard]] std::vector<AppliedSetting> apply_what_if(Hardware& hardware, const WhatIfFlags& flags, bool links_from_file = false);

// The report as printed: `text` (a table, or a JSON document) with the settings echoed.
[[nodiscard]] std::string with_settings(const std::vector<AppliedSetting>& applied, bool json, const std::string& text);

}  // namespace ridgeline::cli
