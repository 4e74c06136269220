#include "cli/what_if.hpp"

#include <nlohmann/json.hpp>

#include "report/table.hpp"

namespace ridgeline::cli {

void add_what_if_flags(CLI::App& command, WhatIfFlags& flags) {
    command.add_option("--set", flags.set,
                       "what-if: replace one figure of the chip or system, PATH=VALUE with units (repeatable), e.g. "
                       "chip.hbm.bandwidth=4.8TB/s, chip.nvlink.bandwidth=900GB/s, system.scale_out.bandwidth=100GB/s, "
                       "chip.peak.bf16=2PFLOP/s, chip.price=2.5")
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    command.add_option("--price", flags.price, "USD per chip-hour (same as --set chip.price_usd_per_chip_hour=...)");
}

void add_memory_margin_flag(CLI::App& command, WhatIfFlags& flags) {
    command.add_option("--memory-margin", flags.memory_margin,
                       "share of each chip's HBM to keep free (fragmentation, framework buffers): plans must fit in the rest, e.g. 0.05")
        ->check(CLI::Range(0.0, 0.5));
}

std::vector<AppliedSetting> apply_what_if(Hardware& hardware, const WhatIfFlags& flags, bool links_from_file) {
    std::vector<std::string> settings = flags.set;
    if (!flags.price.empty()) settings.push_back("chip.price_usd_per_chip_hour=" + flags.price);
    std::vector<AppliedSetting> applied = apply_settings(hardware, settings, links_from_file);
    if (flags.memory_margin > 0) {
        const double before = hardware.chip.hbm_bytes;
        hardware.chip.hbm_bytes *= 1.0 - flags.memory_margin;
        applied.push_back({"chip.hbm_bytes", before, hardware.chip.hbm_bytes, "B", "--memory-margin " + report::fixed(flags.memory_margin, 3)});
    }
    return applied;
}

std::string with_settings(const std::vector<AppliedSetting>& applied, bool json, const std::string& text) {
    if (applied.empty()) return text;
    if (json) {
        nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text);
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const auto& a : applied) {
            nlohmann::ordered_json entry = {{"path", a.path}, {"value", a.after}, {"unit", a.unit}};
            entry["was"] = a.before > 0 ? nlohmann::ordered_json(a.before) : nlohmann::ordered_json(nullptr);
            if (!a.by.empty()) entry["by"] = a.by;
            list.push_back(entry);
        }
        doc["overrides"] = list;
        return doc.dump(2) + (!text.empty() && text.back() == '\n' ? "\n" : "");
    }
    std::string lines;
    for (const auto& a : applied)
        lines += "what-if: " + a.path + " = " + report::si(a.after, a.unit) + " (the file: " +
                 (a.before > 0 ? report::si(a.before, a.unit) : std::string("none")) + (a.by.empty() ? "" : "; " + a.by) + ")\n";
    return lines + text;
}

}  // namespace ridgeline::cli
