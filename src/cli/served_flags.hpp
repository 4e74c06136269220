#pragma once
// The flags both serving commands (serve, search serve) open with: the model, the hardware, the
// serving stack, the request lengths and the what-if settings, and the served model they name.
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/what_if.hpp"
#include "inference/serving.hpp"

namespace ridgeline::cli {

struct ServedFlags {
    std::string model, hardware, stack;
    double input_len = 0, output_len = 0;
    WhatIfFlags what_if;
};

// --model, --hardware, --input-len, --output-len, --stack, the what-if settings and --memory-margin.
void add_served_flags(CLI::App& command, ServedFlags& flags);

// The served model from the catalogs, with the what-if settings applied to its hardware; returns
// those settings, for the report.
[[nodiscard]] std::vector<AppliedSetting> load_served(ServedModel& served, const ServedFlags& flags,
                                                      const std::filesystem::path& data_dir);

}  // namespace ridgeline::cli
