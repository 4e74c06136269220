#include "scenario/scenario_file.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <variant>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "io/catalog_lookup.hpp"
#include "io/json_reader.hpp"
#include "io/quantity_text.hpp"
#include "stack/stack_file.hpp"
#include "model/model_catalog.hpp"
#include "model/plausible_sizes.hpp"
#include "model/recompute_catalog.hpp"
#include "spec/plan_knobs.hpp"

namespace ridgeline {

namespace {
constexpr const char* kFormat = "ridgeline.scenario/1";

// A file named inside a scenario is found beside the scenario, not in the current folder.
std::string beside(const std::filesystem::path& scenario, const std::string& name) {
    const std::filesystem::path named(name);
    if (named.is_absolute() || !io::looks_like_path(name)) return name;
    const std::filesystem::path local = scenario.parent_path() / named;
    std::error_code error;
    return std::filesystem::exists(local, error) ? local.string() : name;
}

// One knob of the plan object; left out or null, the plan keeps its default.
void read_knob(io::JsonObject& plan, const PlanKnob& knob, Plan& p, const std::filesystem::path& path, const std::filesystem::path& data_dir) {
    const std::string key = knob.key;
    if (!plan.has(key) || plan.raw(key).is_null()) {
        plan.allow(key);
        return;
    }
    const auto flag = std::string(" (as --") + knob.flag + ")";
    const auto count = [&] {
        const std::int64_t value = knob.min >= 1 ? plan.positive_int(key) : plan.non_negative_int(key, 0);
        if (static_cast<double>(value) > knob.max) plan.fail(key, "at most " + std::to_string(static_cast<std::int64_t>(knob.max)) + flag);
        return value;
    };
    const auto name = [&] {
        const std::string text = plan.string(key);
        const auto names = io::split_list(std::string(knob.choices));
        if (!knob.choices.empty() && std::find(names.begin(), names.end(), text) == names.end())
            plan.fail(key, "expected one of " + std::string(knob.choices) + ", found \"" + text + "\"");
        return text;
    };
    std::visit(Overloaded{
                   [&](std::int64_t Plan::*m) { p.*m = count(); },
                   [&](std::optional<int> Plan::*m) { p.*m = static_cast<int>(count()); },
                   [&](double Plan::*m) {
                       const double value = knob.whole ? static_cast<double>(plan.positive_int(key)) : plan.positive_number(key);
                       if (value < knob.min || value > knob.max) {
                           std::ostringstream range;
                           range << "expected " << knob.min << " to " << knob.max << flag;
                           plan.fail(key, range.str());
                       }
                       p.*m = value;
                   },
                   [&](bool Plan::*m) { p.*m = plan.boolean(key, p.*m); },
                   [&](std::optional<bool> Plan::*m) { p.*m = plan.boolean(key, true); },
                   [&](std::string Plan::*m) { p.*m = name(); },
                   [&](Dtype Plan::*m) { p.*m = *parse_dtype(name()); },
                   [&](PipelineSchedule Plan::*m) {
                       const std::string text = plan.string(key);
                       const auto schedule = parse_schedule(text);
                       if (!schedule) plan.fail(key, "expected " + schedule_choices() + ", found \"" + text + "\"");
                       p.*m = *schedule;
                   },
                   [&](RecomputePolicy Plan::*m) { p.*m = resolve_recompute(plan.string(key), data_dir, path.string(), plan.field_path(key)); },
                   [&](std::vector<std::int64_t> Plan::*m) { p.*m = plan.positive_int_list(key); },
                   [&](std::vector<std::string> Plan::*m) {
                       const std::vector<std::string> axes = plan.string_list(key);
                       if (axes.empty()) plan.fail(key, "empty: name the plan's axes innermost first, or leave the field out");
                       if (const auto fault = placement_fault(axes)) plan.fail(key, fault->field + ": " + fault->message);
                       p.*m = axes;
                   },
               },
               knob.member);
}

}  // namespace

ScenarioFile load_scenario_file(const std::filesystem::path& path, const std::filesystem::path& data_dir) {
    io::JsonFile json(path, kFormat);
    io::JsonObject& root = json.root();
    ScenarioFile file;
    TrainingSetup& s = file.setup;
    (void)root.optional_string("description");
    // An unknown name is this file's field; a broken file it names is that file's own error.
    const auto named = [&](const char* field, auto resolve) {
        try {
            return resolve(beside(path, root.string(field)), data_dir);
        } catch (const InputError& e) {
            if (e.origin() != kRequest) throw;
            root.fail(field, e.detail());
        }
    };
    s.model = named("model", resolve_model);
    s.hardware = named("hardware", resolve_hardware);
    s.chips = root.positive_int("chips");
    if (s.chips > kMaxChips) root.fail("chips", "at most 1e7 chips (as --chips)");
    s.domains = root.optional_positive_int("nodes").value_or(0);
    if (const auto stack = root.optional_string("stack")) {
        try {
            s.stack = resolve_stack(beside(path, *stack), data_dir);
        } catch (const InputError& e) {
            if (e.origin() != kRequest) throw;  // the stack's own file is broken: that file is named
            root.fail("stack", e.detail());
        }
    }
    s.seq_len = static_cast<double>(root.positive_int("seq_len"));
    if (s.seq_len > kMaxSequenceTokens) root.fail("seq_len", "at most 1e8 tokens (as --seq-len)");
    const auto seqs = root.optional_positive_int("global_batch_seqs");
    const auto tokens = root.optional_positive_int("global_batch_tokens");
    if (seqs && tokens) root.fail("global_batch_tokens", "give global_batch_seqs or global_batch_tokens, not both");
    if (!seqs && !tokens) root.fail("global_batch_seqs", "missing (or give global_batch_tokens)");
    if (seqs) s.global_batch_seqs = static_cast<double>(*seqs);
    if (tokens) {
        file.global_batch_tokens = static_cast<double>(*tokens);
        const auto sequences = batch_sequences(file.global_batch_tokens, s.seq_len);
        if (!sequences) root.fail("global_batch_tokens", "not a whole number of sequences of length " + std::to_string(static_cast<long long>(s.seq_len)));
        s.global_batch_seqs = *sequences;
    }
    file.train_tokens = root.optional_sourced_positive_number("train_tokens").value_or(0.0);
    if (file.train_tokens > 1e16) root.fail("train_tokens", "at most 1e16 tokens (as --train-tokens)");

    auto plan = root.object("plan");
    Plan& p = s.plan;
    for (const DegreeField& d : kDegreeFields)
        if (const auto given = plan.optional_positive_int(d.key)) p.*d.value = *given;
    for (const PlanKnob& knob : kPlanKnobs) read_knob(plan, knob, p, path, data_dir);
    plan.finish();
    root.finish();
    return file;
}

}  // namespace ridgeline
