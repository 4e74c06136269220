#pragma once
// `train`'s plan flags, one per row of kPlanKnobs (spec/plan_knobs.hpp): registered from the table
// and applied from it, so only the flags given override the scenario's or launch file's plan.
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "spec/plan_knobs.hpp"

namespace ridgeline::cli {

// What each knob's flag held, by row: a count, a number, a text (switches, names) or a list.
struct PlanFlags {
    std::array<std::int64_t, kPlanKnobs.size()> count{};
    std::array<double, kPlanKnobs.size()> number{};
    std::array<std::string, kPlanKnobs.size()> text{};
    std::array<std::vector<std::int64_t>, kPlanKnobs.size()> counts{};
};

void add_plan_flags(CLI::App& command, PlanFlags& flags);

// The knobs whose flags were given, set on `plan`; a recomputation policy is found in data_dir.
void apply_plan_flags(const CLI::App& command, const PlanFlags& flags, Plan& plan, const std::filesystem::path& data_dir);

}  // namespace ridgeline::cli
