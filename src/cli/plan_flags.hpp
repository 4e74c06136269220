#pragma once
// The plan flags of `train` and `search train`, one per row of kPlanKnobs (spec/plan_knobs.hpp):
// registered from the table and applied from it, so only the flags given override the scenario's
// or launch file's plan (train) or fix a knob the search would try (search train).
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

// Every knob's flag (train), or those a search takes (searched ones said to be searched when left out).
void add_plan_flags(CLI::App& command, PlanFlags& flags, bool search = false);

// The knobs whose flags were given, set on `knobs`; a recomputation policy is found in data_dir.
void apply_plan_flags(const CLI::App& command, const PlanFlags& flags, GivenKnobs& knobs, const std::filesystem::path& data_dir);

}  // namespace ridgeline::cli
