#include "cli/plan_flags.hpp"

#include <cmath>

#include "cli/switches.hpp"
#include "core/error.hpp"
#include "io/quantity_text.hpp"
#include "model/recompute_catalog.hpp"

namespace ridgeline::cli {

namespace {

std::string flag_name(const PlanKnob& knob) { return "--" + std::string(knob.flag); }

// Whole numbers only: a fractional micro-batch would be rounded in the error that refuses it.
const CLI::Validator kWhole([](const std::string& text) {
    try {
        const double value = std::stod(text);
        return std::isfinite(value) && value == std::floor(value) ? std::string() : "expected a finite whole number, found " + text;
    } catch (const std::exception&) {
        return "expected a number, found " + text;
    }
}, "WHOLE");

}  // namespace

void add_plan_flags(CLI::App& command, PlanFlags& flags, bool search) {
    for (std::size_t i = 0; i < kPlanKnobs.size(); ++i) {
        const PlanKnob& knob = kPlanKnobs[i];
        if (search && knob.search == InSearch::no) continue;
        const std::string name = flag_name(knob);
        const std::string help = std::string(knob.help) + (search && knob.search == InSearch::searched ? " (searched when left out)" : "");
        const CLI::Range count_range(static_cast<std::int64_t>(knob.min), static_cast<std::int64_t>(knob.max));
        const auto text_option = [&] {
            CLI::Option* option = command.add_option(name, flags.text[i], help);
            if (!knob.choices.empty()) option->check(CLI::IsMember(io::split_list(std::string(knob.choices))));
        };
        std::visit(Overloaded{
                       [&](std::int64_t Plan::*) { command.add_option(name, flags.count[i], help)->check(count_range); },
                       [&](std::optional<int> Plan::*) { command.add_option(name, flags.count[i], help)->check(count_range); },
                       [&](double Plan::*) {
                           CLI::Option* option = command.add_option(name, flags.number[i], help)->check(CLI::Range(knob.min, knob.max));
                           if (knob.whole) option->check(kWhole);
                       },
                       [&](bool Plan::*) { add_switch(command, name, flags.text[i], help); },
                       [&](std::optional<bool> Plan::*) { add_switch(command, name, flags.text[i], help); },
                       [&](PipelineSchedule Plan::*) {
                           command.add_option(name, flags.text[i], help)
                               ->check(CLI::IsMember(std::vector<std::string>(kScheduleNames.begin(), kScheduleNames.end())));
                       },
                       [&](std::vector<std::int64_t> Plan::*) { command.add_option(name, flags.counts[i], help)->delimiter(',')->check(count_range); },
                       [&](auto) { text_option(); },  // names, dtypes, policies, lists of axes
                   },
                   knob.member);
    }
}

void apply_plan_flags(const CLI::App& command, const PlanFlags& flags, GivenKnobs& knobs, const std::filesystem::path& data_dir) {
    Plan& plan = knobs.plan;
    for (std::size_t i = 0; i < kPlanKnobs.size(); ++i) {
        const PlanKnob& knob = kPlanKnobs[i];
        const std::string name = flag_name(knob);
        const CLI::Option* option = command.get_option_no_throw(name);  // a search takes some knobs only
        if (option == nullptr || option->count() == 0) continue;
        knobs.given.set(i);
        const std::string& text = flags.text[i];
        std::visit(Overloaded{
                       [&](std::int64_t Plan::*m) { plan.*m = flags.count[i]; },
                       [&](std::optional<int> Plan::*m) { plan.*m = static_cast<int>(flags.count[i]); },
                       [&](double Plan::*m) { plan.*m = flags.number[i]; },
                       [&](bool Plan::*m) { plan.*m = *switch_value(command, name, text); },
                       [&](std::optional<bool> Plan::*m) { plan.*m = switch_value(command, name, text); },
                       [&](std::string Plan::*m) { plan.*m = text; },
                       [&](Dtype Plan::*m) { plan.*m = *parse_dtype(text); },
                       [&](PipelineSchedule Plan::*m) { plan.*m = *parse_schedule(text); },
                       [&](RecomputePolicy Plan::*m) { plan.*m = resolve_recompute(text, data_dir, kRequest, knob.key); },
                       [&](std::vector<std::int64_t> Plan::*m) { plan.*m = flags.counts[i]; },
                       [&](std::vector<std::string> Plan::*m) { plan.*m = io::split_list(text); },
                   },
                   knob.member);
    }
}

}  // namespace ridgeline::cli
