// The sharding derivation against a real compiler: every collective XLA's SPMD partitioner
// inserted for one LLaMA-style layer under eight strategies (tests/data/reference/xla-collectives.json),
// compared per phase and per (kind, mesh axes) in count and bytes with what Ridgeline derives.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "sharding/strategy_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using nlohmann::json;

namespace {

// XLA's three programs: the forward pass, the gradient (forward + backward + gradient
// reductions) and a whole step (with the optimizer's update).
enum class XlaPhase { fwd, grad, step };

struct Traffic {
    int count = 0;
    double bytes = 0;
};
// (kind, axes) -> traffic. Axes of size 1 vanish; all-reduces over several axes are split into one
// per axis (same bytes each), the form XLA emits for gradient reductions: one collective or one per
// axis is a choice, not a difference in what moves.
using Key = std::pair<CollectiveKind, std::string>;
using Tally = std::map<Key, Traffic>;

void add(Tally& tally, CollectiveKind kind, std::vector<std::string> axes, double bytes, const json& mesh) {
    std::erase_if(axes, [&](const std::string& axis) { return mesh.at(axis).get<int>() == 1; });
    if (kind == CollectiveKind::all_reduce && axes.size() > 1) {
        for (const auto& axis : axes) add(tally, kind, {axis}, bytes, mesh);
        return;
    }
    std::string joined;
    for (const auto& axis : axes) joined += (joined.empty() ? "" : ",") + axis;
    Traffic& t = tally[{kind, joined}];
    t.count += 1;
    t.bytes += bytes;
}

Tally xla_tally(const json& c, const std::string& phase) {
    // Norm statistics and loss scalars (category norm-small, loss-scalar; at most 64 KiB) are not
    // part of the layer model; "main" is every projection's traffic.
    static const std::map<std::string, CollectiveKind> kinds = {
        {"all-gather", CollectiveKind::all_gather}, {"all-reduce", CollectiveKind::all_reduce},
        {"reduce-scatter", CollectiveKind::reduce_scatter}, {"all-to-all", CollectiveKind::all_to_all},
        {"collective-permute", CollectiveKind::permute}};
    Tally tally;
    for (const json& x : c.at("variants").at(phase)) {
        if (x.at("duplicate_of_earlier").get<bool>() || x.at("category") != "main") continue;
        const CollectiveKind kind = x.at("ar_then_dynamic_slice").get<bool>() ? CollectiveKind::reduce_scatter : kinds.at(x.at("kind"));
        add(tally, kind, x.at("axes").get<std::vector<std::string>>(), x.at("full_bytes").get<double>(), c.at("mesh"));
    }
    return tally;
}

bool in_phase(CommPhase ours, const std::string& xla_phase) {
    switch (ours) {
        case CommPhase::forward: return true;
        case CommPhase::backward:
        case CommPhase::gradient: return xla_phase != "fwd";
        case CommPhase::optimizer: return xla_phase == "step";
    }
    return false;
}

Tally ridgeline_tally(const LayerWork& work, const std::string& phase, const json& mesh) {
    Tally tally;
    for (const DerivedCollective& c : work.collectives)
        if (in_phase(c.phase, phase)) add(tally, c.kind, c.axes, c.bytes, mesh);
    return tally;
}

std::string describe(const Tally& ours, const Tally& xla) {
    std::ostringstream out;
    std::map<Key, std::pair<Traffic, Traffic>> both;
    for (const auto& [key, t] : ours) both[key].first = t;
    for (const auto& [key, t] : xla) both[key].second = t;
    for (const auto& [key, t] : both)
        out << "  " << collective_name(key.first) << " over " << key.second << ": ridgeline " << t.first.count << " x "
            << t.first.bytes << " B, xla " << t.second.count << " x " << t.second.bytes << " B\n";
    return out.str();
}

// Every (kind, axes) moves the same bytes in as many collectives, except K and V over the context
// axis: XLA moves them as two arrays, Ridgeline as one.
bool agree(const Tally& ours, const Tally& xla) {
    std::map<Key, std::pair<Traffic, Traffic>> both;
    for (const auto& [key, t] : ours) both[key].first = t;
    for (const auto& [key, t] : xla) both[key].second = t;
    for (const auto& [key, t] : both) {
        const auto& [r, x] = t;
        if (test::relative_error(r.bytes, x.bytes) > 1e-9) return false;
        const bool kv_over_context = key.second == "context" && key.first != CollectiveKind::all_reduce;
        if (r.count != x.count && !(kv_over_context && 2 * r.count == x.count)) return false;
    }
    return true;
}

struct Case {
    std::string name;
    json data;
    LayerWork work;
};

// The case's layer derived by Ridgeline: the strategy file of the same name, the case's mesh,
// ZeRO from the axes XLA's optimizer state is sharded over, the whole batch of 16 sequences.
LayerWork derive_case(const std::string& name, const json& c, bool reshard_after_forward, bool forward_only = false) {
    static const ModelSpec model = load_model_file(test::data_file("reference/xla-tiny-llama.json"));
    static const json layer = test::read_json(test::data_file("reference/xla-collectives.json")).at("layer");
    const json& mesh = c.at("mesh");
    const auto size = [&](const char* axis) { return mesh.at(axis).get<std::int64_t>(); };
    Plan p;
    p.fsdp = size("fsdp");
    p.dp = size("data") * p.fsdp;
    p.tp = size("tensor");
    p.cp = size("context");
    p.strategy = c.at("strategy").get<std::string>();
    const auto optimizer_axes = c.at("optimizer_sharded_over").get<std::vector<std::string>>();
    p.zero = optimizer_axes.empty() ? 0 : (p.fsdp > 1 ? 3 : 2);
    if (p.fsdp > 1) p.reshard_after_forward = reshard_after_forward;
    p.sequence_parallel = p.strategy.find("-sp") != std::string::npos;
    const std::int64_t chips = p.dp * p.tp * p.cp;
    const ChipSpec chip = resolve_hardware("h100", test::source_dir()).chip;
    const TrainingPlan plan = make_training_plan(p, chips, {0, layer.at("batch").get<double>()}, model, chip, "case");
    Strategy strategy = resolve_strategy(p.strategy, test::source_dir());
    apply_zero_stage(strategy, plan.zero_stage());
    MicroBatch micro;
    micro.micro_batch_seqs = plan.micro_batch_seqs;
    micro.seq_len = layer.at("seq").get<double>();
    micro.reshard_after_forward = plan.reshards_after_forward();
    micro.fused_projections = name.ends_with("_fused");
    micro.forward_only = forward_only;
    return derive_layer_work(model, strategy, plan.axes, micro, false);
}

const json& cases() {
    static const json all = test::read_json(test::data_file("reference/xla-collectives.json")).at("cases");
    return all;
}

}  // namespace

TEST_CASE("the reference layer is the one the XLA cases were compiled for") {
    const json layer = test::read_json(test::data_file("reference/xla-collectives.json")).at("layer");
    const ModelSpec model = load_model_file(test::data_file("reference/xla-tiny-llama.json"));
    CHECK(model.d_model == layer.at("d_model").get<std::int64_t>());
    CHECK(model.n_heads == layer.at("n_heads").get<std::int64_t>());
    CHECK(model.n_kv_heads == layer.at("n_kv_heads").get<std::int64_t>());
    CHECK(model.head_dim == layer.at("head_dim").get<std::int64_t>());
    CHECK(model.d_ff == layer.at("d_ff").get<std::int64_t>());
    CHECK(cases().size() == 16);
}

TEST_CASE("every collective XLA inserts for a layer, Ridgeline derives: per phase, kind and axes, count and bytes") {
    int compared = 0, agreeing = 0;
    for (const auto& [name, c] : cases().items()) {
        // XLA keeps the forward's gathered weights for the backward pass (no rematerialisation).
        const LayerWork work = derive_case(name, c, false);
        for (const std::string phase : {"fwd", "grad", "step"}) {
            const Tally ours = ridgeline_tally(work, phase, c.at("mesh"));
            const Tally xla = xla_tally(c, phase);
            INFO(name << " " << phase << "\n" << describe(ours, xla));
            CHECK(agree(ours, xla));
            agreeing += agree(ours, xla) ? 1 : 0;
            ++compared;
        }
    }
    CHECK(compared == 48);
    MESSAGE("XLA comparison: " << agreeing << " of " << compared << " (case, phase) pairs agree in count and bytes per (kind, axes)");
}

TEST_CASE("resharding after the forward pass adds one more gather of every fsdp-sharded weight in the backward") {
    int compared = 0;
    for (const auto& [name, c] : cases().items()) {
        if (c.at("mesh").at("fsdp").get<int>() == 1) continue;
        const LayerWork kept = derive_case(name, c, false);
        const LayerWork resharded = derive_case(name, c, true);
        const Key gathers{CollectiveKind::all_gather, "fsdp"};
        const Traffic fwd = xla_tally(c, "fwd").at(gathers);
        for (const std::string phase : {"grad", "step"}) {
            Tally xla = xla_tally(c, phase);
            xla[gathers].count += fwd.count;
            xla[gathers].bytes += fwd.bytes;
            INFO(name << " " << phase << "\n" << describe(ridgeline_tally(resharded, phase, c.at("mesh")), xla));
            CHECK(agree(ridgeline_tally(resharded, phase, c.at("mesh")), xla));
            CHECK_FALSE(agree(ridgeline_tally(kept, phase, c.at("mesh")), xla));
            ++compared;
        }
    }
    CHECK(compared == 12);  // fsdp, fsdp-tp and maxtext, fused and not
}

// Serving derives the forward pass alone: the same forward collectives, GEMMs and tokens as the
// training derivation that XLA's cases check, and nothing of the backward pass or the step.
TEST_CASE("a forward-only derivation keeps exactly the forward collectives of each XLA case") {
    for (const auto& [name, c] : cases().items()) {
        CAPTURE(name);
        const LayerWork training = derive_case(name, c, true), serving = derive_case(name, c, true, true);
        std::vector<const DerivedCollective*> forward;
        for (const DerivedCollective& d : training.collectives)
            if (d.phase == CommPhase::forward) forward.push_back(&d);
        REQUIRE(serving.collectives.size() == forward.size());
        for (std::size_t i = 0; i < forward.size(); ++i) {
            CHECK(serving.collectives[i].what == forward[i]->what);
            CHECK(serving.collectives[i].kind == forward[i]->kind);
            CHECK(serving.collectives[i].axes == forward[i]->axes);
            CHECK(serving.collectives[i].bytes == forward[i]->bytes);
        }
        CHECK(serving.matmuls.size() == training.matmuls.size());
        CHECK(serving.local_tokens == training.local_tokens);
        CHECK(serving.elementwise_elements() == training.elementwise_elements());
    }
}
