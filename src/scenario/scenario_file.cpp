#include "scenario/scenario_file.hpp"

#include <cmath>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "io/catalog_lookup.hpp"
#include "io/json_reader.hpp"
#include "stack/stack_file.hpp"
#include "model/model_catalog.hpp"
#include "model/plausible_sizes.hpp"
#include "model/recompute_catalog.hpp"

namespace ridgeline {

namespace {
constexpr const char* kFormat = "ridgeline.scenario/1";

template <typename Parse>
auto parse_choice(io::JsonObject& object, const std::string& key, Parse parse, const std::string& fallback,
                  const std::string& expected) {
    const std::string text = object.optional_string(key).value_or(fallback);
    const auto value = parse(text);
    if (!value) object.fail(key, "expected " + expected + ", found \"" + text + "\"");
    return *value;
}
// A file named inside a scenario is found beside the scenario, not in the current folder.
std::string beside(const std::filesystem::path& scenario, const std::string& name) {
    const std::filesystem::path named(name);
    if (named.is_absolute() || !io::looks_like_path(name)) return name;
    const std::filesystem::path local = scenario.parent_path() / named;
    std::error_code error;
    return std::filesystem::exists(local, error) ? local.string() : name;
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
    s.global_batch_seqs = seqs ? static_cast<double>(*seqs) : static_cast<double>(*tokens) / s.seq_len;
    if (tokens) file.global_batch_tokens = static_cast<double>(*tokens);
    if (s.global_batch_seqs != std::floor(s.global_batch_seqs))
        root.fail("global_batch_tokens", "not a whole number of sequences of length " + std::to_string(static_cast<long long>(s.seq_len)));
    file.train_tokens = root.optional_sourced_positive_number("train_tokens").value_or(0.0);
    if (file.train_tokens > 1e16) root.fail("train_tokens", "at most 1e16 tokens (as --train-tokens)");

    auto plan = root.object("plan");
    Plan& p = s.plan;
    for (const DegreeField& d : kDegreeFields)
        if (const auto given = plan.optional_positive_int(d.key)) p.*d.value = *given;
    p.etp = plan.optional_positive_int("etp").value_or(0);
    p.fold_experts = plan.boolean("fold_experts", false);
    p.vpp = plan.optional_positive_int("vpp").value_or(1);
    if (plan.has("stage_layers")) p.stage_layers = plan.positive_int_list("stage_layers");
    else plan.allow("stage_layers");
    p.sequence_parallel = plan.boolean("sequence_parallel", false);
    if (plan.has("zero")) {
        p.zero = static_cast<int>(plan.non_negative_int("zero", 1));
        if (*p.zero > 3) plan.fail("zero", "expected 0, 1, 2 or 3");
    } else {
        plan.allow("zero");
    }
    if (plan.has("reshard_after_forward")) p.reshard_after_forward = plan.boolean("reshard_after_forward", true);
    else plan.allow("reshard_after_forward");
    p.recompute = resolve_recompute(plan.optional_string("recompute").value_or("none"), data_dir, path.string(), plan.field_path("recompute"));
    p.schedule = parse_choice(plan, "schedule", [](const std::string& t) { return parse_schedule(t); }, "1f1b", schedule_choices());
    p.precision = parse_choice(plan, "precision", [](const std::string& t) { return parse_dtype(t); }, "bf16", "bf16, fp16 or fp8");
    p.micro_batch_seqs = static_cast<double>(plan.optional_positive_int("micro_batch_seqs").value_or(0));
    p.strategy = plan.optional_string("strategy").value_or("");
    p.overlap = plan.boolean("overlap", true);
    p.tp_overlap = plan.boolean("tp_overlap", false);
    p.moe_dispatcher = plan.optional_string("moe_dispatcher").value_or("alltoall");
    p.ep_overlap = plan.boolean("ep_overlap", false);
    p.fp8_dispatch = plan.boolean("fp8_dispatch", false);
    p.mtp_depth = plan.non_negative_int("mtp_depth", 0);
    if (p.mtp_depth > kMaxMtpDepth) plan.fail("mtp_depth", "at most " + std::to_string(kMaxMtpDepth) + " modules (as --mtp-depth)");
    if (plan.has("expert_imbalance")) p.expert_imbalance = plan.positive_number("expert_imbalance");
    else plan.allow("expert_imbalance");
    p.offload_optimizer = plan.boolean("offload_optimizer", false);
    plan.finish();
    root.finish();
    return file;
}

}  // namespace ridgeline
