#include "scenario/serving_setup.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "io/quantity_text.hpp"
#include "mesh/plan_axes.hpp"
#include "model/model_catalog.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/stack_file.hpp"

namespace ridgeline {

namespace {
std::string text(std::int64_t value) { return std::to_string(value); }
}  // namespace

void set_serving_dtype(Plan& plan, const ServingKnob& knob, const std::string& name) {
    const auto choices = io::split_list(std::string(knob.choices));
    const auto dtype = parse_dtype(name);
    if (!dtype || std::find(choices.begin(), choices.end(), name) == choices.end()) {
        std::string listed;
        for (const std::string& choice : choices) listed += (listed.empty() ? "" : ", ") + choice;
        throw InputError("--" + std::string(knob.flag), "", "'" + name + "' is not one of " + listed);
    }
    std::visit([&](auto member) { plan.*member = *dtype; }, knob.member);
}

ServedModel load_served_model(const std::string& model, const std::string& hardware, const std::filesystem::path& data_dir,
                              const std::string& stack) {
    ServedModel served{resolve_model(model, data_dir), resolve_hardware(hardware, data_dir), resolve_strategy(kServingStrategy, data_dir), {}};
    require_kernel_data(served.hardware.chip);
    served.stack = stack.empty() ? default_stack(served.hardware.chip, true, data_dir) : resolve_stack(stack, data_dir);
    require_job(served.stack, true, "--stack");
    return served;
}

ServingScenario build_serving_scenario(const ServingSetup& setup) {
    require_kernel_data(setup.hardware.chip);
    ServingScenario s;
    static_cast<ServingLoad&>(s) = setup;
    s.model = setup.model;
    s.chip = setup.hardware.chip;
    s.plan = setup.plan;
    s.strategy = setup.strategy;
    s.stack = setup.stack;
    if (s.speculative.draft_tokens > 0) {
        if (s.speculative.draft_tokens > s.model.mtp_depth)
            throw InputError(kRequest, "draft_tokens", text(s.speculative.draft_tokens) + " drafts need as many prediction modules; " +
                                                           s.model.name + " has " + text(s.model.mtp_depth) + " (mtp_depth)");
        if (!(s.speculative.acceptance >= 0.0 && s.speculative.acceptance <= 1.0))
            throw InputError(kRequest, "acceptance", "a probability from 0 to 1, found " + std::to_string(s.speculative.acceptance));
    }
    if (setup.chips < 1) throw InputError(kRequest, "chips", "at least one chip");
    if (s.plan.tp < 1 || s.plan.pp < 1 || s.plan.ep < 1 || s.plan.dp < 0)
        throw InputError(kRequest, "tp", "parallel degrees must be at least 1");
    const std::int64_t replica = s.plan.tp * s.plan.pp;
    if (s.plan.dp == 0) {
        if (setup.chips % replica != 0)
            throw InputError(kRequest, "tp", "tp x pp = " + text(replica) + " does not divide " + text(setup.chips) + " chips");
        s.plan.dp = setup.chips / replica;
    }
    if (s.plan.chips() != setup.chips)
        throw InputError(kRequest, "dp", "dp x tp x pp = " + text(s.plan.chips()) + " but there are " + text(setup.chips) + " chips");
    if (setup.input_len < 1) throw InputError(kRequest, "input_len", "at least one prompt token");
    if (setup.output_len < 1) throw InputError(kRequest, "output_len", "at least one output token");
    check_serving_plan(s.model, s.chip, s.plan, s.batch_seqs);

    ClusterShape shape;
    shape.chips = setup.chips;
    s.cluster = build_cluster(setup.hardware, shape);
    s.mesh = place_serving_plan(s.cluster, s.plan);
    return s;
}

}  // namespace ridgeline
