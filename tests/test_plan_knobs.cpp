// The plan's knobs are one table (spec/plan_knobs): `train`'s flags and the scenario reader walk it,
// and the scenario schema lists it. Each knob is set both ways to a value that is not its default,
// and each is refused both ways with a value out of its range, naming the field or flag.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/plan_flags.hpp"
#include "core/error.hpp"
#include "scenario/scenario_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using nlohmann::json;

namespace {

// A value for each knob that is not Plan's default, as a scenario writes it and as a flag takes it;
// then one each reader must refuse. Written here, not taken from the table, so a knob the table
// gains without a reader (or a reader that ignores one) fails below.
struct Sample {
    json value;
    std::vector<std::string> flag_args;  // after the flag
    json bad;
    std::string bad_flag;
};

const std::map<std::string, Sample>& samples() {
    static const std::map<std::string, Sample> table = {
        {"etp", {2, {"2"}, 0, "0"}},
        {"fold_experts", {true, {}, "yes", "yes"}},
        {"vpp", {3, {"3"}, 0, "0"}},
        {"stage_layers", {json::array({3, 4, 5}), {"3,4,5"}, json::array({3, 0}), "3,0"}},
        {"sequence_parallel", {true, {"on"}, 1, "1"}},
        {"zero", {2, {"2"}, 4, "4"}},
        {"reshard_after_forward", {false, {"off"}, "no", "no"}},
        {"recompute", {"selective", {"selective"}, "sometimes", "sometimes"}},
        {"schedule", {"zb1p", {"zb1p"}, "zigzag", "zigzag"}},
        {"precision", {"fp8", {"fp8"}, "fp64", "fp64"}},
        {"micro_batch_seqs", {4, {"4"}, 1.5, "1.5"}},
        {"strategy", {"fsdp-tp", {"fsdp-tp"}, 7, ""}},
        {"overlap", {false, {"off"}, "off", "maybe"}},
        {"tp_overlap", {true, {"on"}, 0, "0"}},
        {"moe_dispatcher", {"deepep", {"deepep"}, "nccl", "nccl"}},
        {"ep_overlap", {true, {}, 1, "1"}},
        {"fp8_dispatch", {true, {"on"}, "on", "always"}},
        {"mtp_depth", {1, {"1"}, 17, "17"}},
        {"expert_imbalance", {1.25, {"1.25"}, 0.5, "0.5"}},
        {"offload_optimizer", {true, {"on"}, "true", "yes"}},
        {"placement", {json::array({"tensor", "data", "pipeline"}), {"tensor,data,pipeline"}, json::array({"tensor", "galaxy"}), ""}},
    };
    return table;
}

std::filesystem::path scenario_with(const std::string& key, const json& value) {
    json scenario = {{"schema", "ridgeline.scenario/1"}, {"model", "llama3-8b"}, {"hardware", "dgx-h100"}, {"chips", 8},
                     {"seq_len", 4096},  {"global_batch_seqs", 64},   {"plan", {{"tp", 2}, {key, value}}}};
    const auto path = test::scratch_dir("plan-knobs") / (key + ".json");
    std::ofstream(path) << scenario.dump();
    return path;
}

Plan plan_from_flags(const std::string& flag, const std::vector<std::string>& args) {
    CLI::App app;
    cli::PlanFlags flags;
    cli::add_plan_flags(app, flags);
    std::vector<std::string> argv = {"--" + flag};
    argv.insert(argv.end(), args.begin(), args.end());
    std::reverse(argv.begin(), argv.end());  // CLI11 takes the arguments last first
    app.parse(argv);
    GivenKnobs knobs;
    cli::apply_plan_flags(app, flags, knobs, test::source_dir());
    CHECK(knobs.given.count() == 1);
    return knobs.plan;
}

// Whether the knob's member differs between two plans.
bool differs(const PlanKnob& knob, const Plan& a, const Plan& b) {
    return std::visit([&](auto member) { return !(a.*member == b.*member); }, knob.member);
}

}  // namespace

TEST_CASE("every plan knob has a sample here, and the scenario schema lists exactly the degrees and the knobs") {
    std::set<std::string> table;
    for (const PlanKnob& knob : kPlanKnobs) table.insert(knob.key);
    std::set<std::string> sampled;
    for (const auto& [key, sample] : samples()) sampled.insert(key);
    CHECK(table == sampled);

    const json schema = test::read_json(test::source_dir() / "schemas" / "ridgeline.scenario-1.schema.json");
    std::set<std::string> listed;
    for (const auto& [key, property] : schema.at("properties").at("plan").at("properties").items()) listed.insert(key);
    for (const DegreeField& d : kDegreeFields) table.insert(d.key);
    CHECK(listed == table);
}

TEST_CASE("each knob set in a scenario file and by its flag gives the same plan, away from the default") {
    const Plan defaults;
    for (const PlanKnob& knob : kPlanKnobs) {
        const std::string key = knob.key;
        CAPTURE(key);
        const Sample& sample = samples().at(knob.key);
        const Plan from_file = load_scenario_file(scenario_with(knob.key, sample.value), test::source_dir()).setup.plan;
        const Plan from_flag = plan_from_flags(knob.flag, sample.flag_args);
        CHECK(differs(knob, from_file, defaults));
        CHECK_FALSE(differs(knob, from_file, from_flag));
    }
}

TEST_CASE("a scenario's placement names each plan axis once, and at least one") {
    for (const json& axes : {json::array(), json::array({"tensor", "tensor"})}) {
        const auto path = scenario_with("placement", axes);
        CAPTURE(axes.dump());
        try {
            (void)load_scenario_file(path, test::source_dir());
            FAIL("accepted");
        } catch (const InputError& e) {
            CHECK(e.field() == "plan.placement");
        }
    }
}

TEST_CASE("a knob out of its range is refused by the scenario reader naming plan.<key>, and by its flag") {
    for (const PlanKnob& knob : kPlanKnobs) {
        const std::string key = knob.key;
        CAPTURE(key);
        const Sample& sample = samples().at(knob.key);
        const auto path = scenario_with(knob.key, sample.bad);
        try {
            (void)load_scenario_file(path, test::source_dir());
            FAIL("accepted");
        } catch (const InputError& e) {
            CHECK(e.origin() == path.string());
            CHECK(e.field() == "plan." + std::string(knob.key));
        }
        if (sample.bad_flag.empty()) continue;  // any name is a strategy; the axes are checked where the mesh is placed
        bool refused = false;
        try {
            (void)plan_from_flags(knob.flag, {sample.bad_flag});
        } catch (const CLI::ParseError&) {
            refused = true;
        } catch (const InputError& e) {
            refused = e.origin() == "--" + std::string(knob.flag) || e.field() == knob.key;
        }
        CHECK(refused);
    }
}
