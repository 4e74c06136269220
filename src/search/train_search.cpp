#include "search/train_search.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <thread>

#include "collective/collective_memo.hpp"
#include "core/error.hpp"
#include "engine/roofline.hpp"
#include "mesh/plan_axes.hpp"
#include "search/search_front.hpp"

namespace ridgeline {

namespace {

// Why an input error rejected a plan: the field and what is wrong with it.
std::string reason(const InputError& e) { return e.field().empty() ? e.detail() : e.field() + ": " + e.detail(); }

constexpr const auto& kAxisNames = kPlanAxisNames;
enum AxisIndex : std::uint8_t { kData, kFsdp, kExpert, kTensor, kContext, kPipeline };

double d(std::int64_t value) { return static_cast<double>(value); }
std::string text(std::int64_t value) { return std::to_string(value); }

std::vector<std::int64_t> divisors(std::int64_t n) {
    std::vector<std::int64_t> low, high;
    for (std::int64_t i = 1; i * i <= n; ++i)
        if (n % i == 0) {
            low.push_back(i);
            if (i != n / i) high.push_back(n / i);
        }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

template <typename T>
std::vector<T> either(const std::optional<T>& fixed, std::vector<T> all) {
    return fixed ? std::vector<T>{*fixed} : all;
}

struct ScheduleOption {
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    std::int64_t vpp = 1;
};

// The option lists of one layout. Counting and enumerating both read them, so the counts of
// plans rejected in bulk match what enumeration would have visited.
struct LayoutOptions {
    std::vector<bool> sequence_parallel;
    std::vector<std::int64_t> etp;
    std::vector<int> zeros;
    std::vector<std::array<std::uint8_t, 6>> placements;
    std::uint8_t placed_axes = 0;
    std::vector<std::int64_t> micro_batches;
    std::vector<ScheduleOption> schedules;
    std::vector<RecomputePolicy> recomputes;
    std::vector<bool> offloads, overlaps, tp_overlaps;
    bool uneven_pipeline = false;

    [[nodiscard]] std::uint64_t knob_plans(std::size_t zero_count) const {
        return schedules.size() * recomputes.size() * zero_count * offloads.size() * overlaps.size() * tp_overlaps.size();
    }
    [[nodiscard]] std::uint64_t per_micro_batch() const { return placements.size() * knob_plans(zeros.size()); }
    [[nodiscard]] std::uint64_t total() const {
        return sequence_parallel.size() * etp.size() * micro_batches.size() * per_micro_batch();
    }
};

class Search {
public:
    explicit Search(const TrainSearchSpec& spec) : spec_(spec), fixed_strategy_(spec.fixed.knob(&Plan::strategy)) {
        if (fixed_strategy_) {
            const Strategy& s = spec.strategies.at(*fixed_strategy_);
            for (std::size_t i = 0; i < kAxisNames.size(); ++i) strategy_axes_[i] = mentions(s, kAxisNames[i]);
        } else {
            strategy_axes_.fill(true);
        }
    }

    TrainSearchResult run();

private:
    struct Accumulator {
        TrainSearchResult result;
        TopPlans top;
        PlanFront pareto;
        CollectiveMemo memo;
        explicit Accumulator(std::size_t k) : top(k) {}
    };
    // A share of the work: the layouts with these degrees (data and expert split the rest).
    struct Unit {
        std::int64_t tp, pp, cp, fsdp;
    };

    static bool mentions(const Strategy& s, const std::string& axis);
    [[nodiscard]] std::vector<Unit> units() const;
    void check_fixed() const;
    [[nodiscard]] std::optional<Rejection> reject_layout(const Degrees& g) const;
    [[nodiscard]] LayoutOptions options(const Degrees& g) const;
    void run_unit(const Unit& unit, std::uint64_t ordinal, Accumulator& acc, TrainingScenario& scenario) const;
    void run_layout(const Degrees& g, std::uint64_t& ordinal, Accumulator& acc, TrainingScenario& scenario) const;
    void run_knobs(const LayoutOptions& o, const std::vector<int>& zeros, const LayoutCosts& l, SearchedPlan& plan,
                   std::uint64_t& ordinal, Accumulator& acc) const;

    const TrainSearchSpec& spec_;
    std::array<bool, 6> strategy_axes_{};
    std::optional<std::string> fixed_strategy_;  // the strategy given, if one was
};

bool Search::mentions(const Strategy& s, const std::string& axis) {
    const auto in = [&](const TensorSpec& t) {
        for (const auto& axes : t.axes)
            if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return true;
        return false;
    };
    return s.layers_axis == axis || in(s.residual) || in(s.attention) || in(s.mlp_hidden) || in(s.w_qkv) || in(s.w_out) ||
           in(s.w_mlp_in) || in(s.w_mlp_out);
}

std::vector<Search::Unit> Search::units() const {
    const SearchConstraints& f = spec_.fixed;
    const std::int64_t chips = spec_.cluster.chips();
    std::vector<Unit> out;
    for (const std::int64_t tp : divisors(chips)) {
        if ((f.tp && tp != *f.tp) || (tp > 1 && !strategy_axes_[kTensor])) continue;
        for (const std::int64_t pp : divisors(chips / tp)) {
            if ((f.pp && pp != *f.pp) || (pp > 1 && !strategy_axes_[kPipeline])) continue;
            for (const std::int64_t cp : divisors(chips / (tp * pp))) {
                if ((f.cp && cp != *f.cp) || (cp > 1 && !strategy_axes_[kContext])) continue;
                const std::int64_t dp = chips / (tp * pp * cp);
                if (f.dp && dp != *f.dp) continue;
                for (const std::int64_t fsdp : divisors(dp)) {
                    if ((f.fsdp && fsdp != *f.fsdp) || (fsdp > 1 && !strategy_axes_[kFsdp])) continue;
                    // ZeRO-3 is what sharding the parameters over fsdp means, and only that.
                    if (f.plan.zero && (*f.plan.zero == 3) != (fsdp > 1)) continue;
                    out.push_back({tp, pp, cp, fsdp});
                }
            }
        }
    }
    return out;
}

void Search::check_fixed() const {
    const SearchConstraints& f = spec_.fixed;
    const ModelSpec& m = spec_.model;
    const std::int64_t chips = spec_.cluster.chips();
    const auto divides_chips = [&](const std::optional<std::int64_t>& value, const char* field) {
        if (value && chips % *value != 0) throw InputError(kRequest, field, text(*value) + " does not divide " + text(chips) + " chips");
    };
    divides_chips(f.tp, "tp");
    divides_chips(f.pp, "pp");
    divides_chips(f.cp, "cp");
    divides_chips(f.dp, "dp");
    const std::int64_t fixed_product = f.tp.value_or(1) * f.pp.value_or(1) * f.cp.value_or(1) * f.dp.value_or(1);
    if (chips % fixed_product != 0)
        throw InputError(kRequest, "dp", "the fixed degrees multiply to " + text(fixed_product) + ", which does not divide " +
                                         text(chips) + " chips");
    if (f.dp && f.tp && f.pp && f.cp && fixed_product != chips)
        throw InputError(kRequest, "dp", "dp x tp x pp x cp = " + text(fixed_product) + " but there are " + text(chips) + " chips");
    if (f.dp && f.fsdp && *f.dp % *f.fsdp != 0) throw InputError(kRequest, "fsdp", "does not divide dp " + text(*f.dp));
    // The model's rules on the fixed degrees, the free ones at 1 (which keeps every rule).
    Degrees fixed;
    fixed.dp = f.dp.value_or(1);
    for (const DegreeField& field : kDegreeFields)
        if (field.value != &Degrees::dp) fixed.*field.value = (f.*field.given).value_or(1);
    if (const auto fault = model_fault(m, fixed, {spec_.seq_len, spec_.global_batch_seqs, "dp"}))
        throw InputError(kRequest, fault->field, fault->message);
    const auto vpp = f.knob(&Plan::vpp), etp = f.knob(&Plan::etp);
    const std::optional<int>& zero = f.plan.zero;
    if (vpp && *vpp > 1 && f.pp && *f.pp == 1) throw InputError(kRequest, "vpp", "virtual stages need pipeline parallelism");
    if (zero && f.fsdp && *f.fsdp > 1 && *zero != 3) throw InputError(kRequest, "zero", "fsdp shards everything (ZeRO-3)");
    if (zero && f.fsdp && *f.fsdp == 1 && *zero == 3) throw InputError(kRequest, "zero", "ZeRO-3 is fsdp: give fsdp above 1 or leave it free");
    if (etp && *etp != 1 && f.tp && *etp != *f.tp) throw InputError(kRequest, "etp", "must be 1 or equal to tp");
    if (const auto placement = f.knob(&Plan::placement)) {
        if (placement->size() > kAxisNames.size()) throw InputError(kRequest, "placement", "names more axes than a plan has");
        if (const auto fault = placement_fault(*placement)) throw InputError(kRequest, fault->field, fault->message);
    }
    if (!spec_.chip.supports(spec_.precision))
        throw InputError(kRequest, "precision", spec_.chip.name + " has no " + std::string(dtype_name(spec_.precision)) + " arithmetic");
    // The smallest data-parallel degree any plan allows: the batch must reach it.
    const std::vector<Unit> all_units = units();
    if (all_units.empty()) throw InputError(kRequest, "dp", "no split of " + text(chips) + " chips matches the fixed degrees");
    std::int64_t largest_model_parallel = 1;
    for (const Unit& u : all_units) largest_model_parallel = std::max(largest_model_parallel, u.tp * u.pp * u.cp);
    const std::int64_t smallest_dp = chips / largest_model_parallel;
    if (spec_.global_batch_seqs < d(smallest_dp))
        throw InputError(kRequest, "global_batch_tokens", "a global batch of " + text(static_cast<std::int64_t>(spec_.global_batch_seqs)) +
                                                          " sequences is smaller than the smallest data-parallel degree (" +
                                                          text(smallest_dp) + ") the fixed knobs allow on " + text(chips) + " chips");
}

std::optional<Rejection> Search::reject_layout(const Degrees& g) const {
    return model_rejection(spec_.model, g, {spec_.seq_len, spec_.global_batch_seqs});
}

LayoutOptions Search::options(const Degrees& g) const {
    const SearchConstraints& f = spec_.fixed;
    const ModelSpec& m = spec_.model;
    LayoutOptions o;
    const bool fixed_strategy = fixed_strategy_.has_value();
    const auto vpp = f.knob(&Plan::vpp);
    const auto schedule = f.knob(&Plan::schedule);
    o.sequence_parallel = g.tp > 1 && !fixed_strategy ? either(f.knob(&Plan::sequence_parallel), {false, true}) : std::vector<bool>{false};
    o.etp = m.moe && g.ep > 1 && g.tp > 1 && !fixed_strategy ? either<std::int64_t>(f.knob(&Plan::etp), {0, 1}) : std::vector<std::int64_t>{0};
    if (g.fsdp > 1) o.zeros = {3};
    else if (g.dp == 1) o.zeros = {f.plan.zero.value_or(0)};  // nothing to shard over: one plan, not three
    else o.zeros = either<int>(f.plan.zero, {0, 1, 2});

    const auto sizes = g.sizes();
    std::array<std::uint8_t, 6> order{};
    if (const auto placement = f.knob(&Plan::placement)) {
        // Checked names, in the given order; the axes left out go outermost.
        for (const auto& name : *placement)
            order[o.placed_axes++] = static_cast<std::uint8_t>(std::find(kAxisNames.begin(), kAxisNames.end(), name) - kAxisNames.begin());
        o.placements.push_back(order);
    } else {
        for (std::uint8_t i = 0; i < 6; ++i)
            if (sizes[i] > 1) order[o.placed_axes++] = i;
        do o.placements.push_back(order);
        while (std::next_permutation(order.begin(), order.begin() + o.placed_axes));
    }

    if (std::fmod(spec_.global_batch_seqs, d(g.dp)) == 0.0) {
        const auto per_replica = static_cast<std::int64_t>(spec_.global_batch_seqs) / g.dp;
        const auto micro_batch = f.knob(&Plan::micro_batch_seqs);
        o.micro_batches = micro_batch ? std::vector<std::int64_t>{static_cast<std::int64_t>(*micro_batch)} : divisors(per_replica);
    } else {
        o.micro_batches = {1};
    }

    o.uneven_pipeline = m.n_layers % g.pp != 0;
    if (g.pp == 1) {
        // Without a pipeline the schedule does not matter, but interleaving cannot be asked of it.
        const bool interleaving_fixed = (vpp && *vpp > 1) || (schedule && *schedule == PipelineSchedule::interleaved);
        if (!interleaving_fixed) o.schedules = {{PipelineSchedule::one_f_one_b, 1}};
    } else {
        for (const PipelineSchedule s : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b})
            if ((!schedule || *schedule == s) && (!vpp || *vpp == 1)) o.schedules.push_back({s, 1});
        // Zero-bubble and DualPipe need their stack's support: searched only when asked for.
        if (schedule && *schedule == PipelineSchedule::zero_bubble) o.schedules.push_back({PipelineSchedule::zero_bubble, 1});
        if (schedule && *schedule == PipelineSchedule::dualpipe && g.pp % 2 == 0) o.schedules.push_back({PipelineSchedule::dualpipe, 1});
        // Interleaving: chunks that divide the largest stage, each rank keeping a layer per chunk
        // (an uneven split's lighter stages hold a layer fewer).
        const std::int64_t largest = (m.n_layers + g.pp - 1) / g.pp, smallest = m.n_layers / g.pp;
        if (!schedule || *schedule == PipelineSchedule::interleaved)
            for (const std::int64_t v : divisors(largest))
                if (v > 1 && v <= smallest && (!vpp || *vpp == v)) o.schedules.push_back({PipelineSchedule::interleaved, v});
    }
    o.recomputes = f.recompute_policies.empty() ? std::vector<RecomputePolicy>{RecomputePolicy{}} : f.recompute_policies;
    o.offloads = either(f.knob(&Plan::offload_optimizer), {false, true});
    o.overlaps = either(f.knob(&Plan::overlap), {true, false});
    o.tp_overlaps = g.tp > 1 ? either(f.knob(&Plan::tp_overlap), {false, true}) : std::vector<bool>{false};
    return o;
}

void Search::run_unit(const Unit& unit, std::uint64_t ordinal, Accumulator& acc, TrainingScenario& scenario) const {
    const SearchConstraints& f = spec_.fixed;
    const std::int64_t dp = spec_.cluster.chips() / (unit.tp * unit.pp * unit.cp);
    for (const std::int64_t ep : divisors(dp / unit.fsdp)) {
        // A dense model has no expert axis to search (a fixed --ep on one is refused up front).
        if ((f.ep && ep != *f.ep) || (ep > 1 && (!strategy_axes_[kExpert] || !spec_.model.moe))) continue;
        if (dp / unit.fsdp / ep > 1 && !strategy_axes_[kData]) continue;
        run_layout({dp, unit.tp, unit.pp, unit.cp, ep, unit.fsdp}, ordinal, acc, scenario);
    }
}

void Search::run_layout(const Degrees& g, std::uint64_t& ordinal, Accumulator& acc, TrainingScenario& scenario) const {
    const LayoutOptions o = options(g);
    TrainSearchResult& r = acc.result;
    const auto reject_bulk = [&](Rejection why, std::uint64_t count) {
        r.rejected[static_cast<std::size_t>(why)] += count;
        r.plans_evaluated += count;
        ordinal += count;
    };
    if (o.schedules.empty()) return;  // the fixed schedule has no plan here: outside the space, not rejected
    if (const auto why = reject_layout(g)) return reject_bulk(*why, o.total());

    const double hbm = spec_.chip.hbm_bytes;
    SearchedPlan plan;
    static_cast<Degrees&>(plan) = g;
    if (o.uneven_pipeline) plan.stage_layers = balanced_stage_layers(spec_.model.n_layers, g.pp);
    plan.precision = spec_.precision;
    const Plan& given = spec_.fixed.plan;  // the knobs a search never tries: as given, or Plan's defaults
    plan.moe_dispatcher = given.moe_dispatcher;
    plan.ep_overlap = given.ep_overlap && g.ep > 1;
    plan.expert_imbalance = g.ep > 1 ? given.expert_imbalance : 1.0;
    plan.mtp_depth = given.mtp_depth;
    if (g.fsdp > 1) plan.reshard_after_forward = given.reshard_after_forward;
    const double per_replica = spec_.global_batch_seqs / d(g.dp);

    // Each order of the axes on the topology, laid once for every knob of the layout (or not at
    // all: an axis may not fit what its inner axes left of a dimension).
    TrainingPlan axes_only;
    const auto sizes = g.sizes();
    for (std::size_t i = 0; i < kAxisNames.size(); ++i) axes_only.axes[kAxisNames[i]] = sizes[i];
    std::vector<std::optional<Mesh>> meshes(o.placements.size());
    for (std::size_t pi = 0; pi < o.placements.size(); ++pi) {
        std::vector<std::string> names;
        for (std::uint8_t i = 0; i < o.placed_axes; ++i) names.emplace_back(kAxisNames[o.placements[pi][i]]);
        try {
            meshes[pi] = place_plan(scenario.cluster, axes_only, names);
        } catch (const InputError& e) {
            r.keep_example(Rejection::placement, ordinal, reason(e));
        }
    }
    if (std::none_of(meshes.begin(), meshes.end(), [](const auto& mesh) { return mesh.has_value(); }))
        return reject_bulk(Rejection::placement, o.total());

    for (const bool sp : o.sequence_parallel)
        for (const std::int64_t etp : o.etp) {
            plan.sequence_parallel = sp;
            plan.etp = etp;
            plan.strategy = fixed_strategy_ ? *fixed_strategy_ : default_strategy_name(plan);
            for (const bool sharded : {false, true}) {
                std::vector<int> zeros;
                for (const int z : o.zeros)
                    if ((z >= 1) == sharded) zeros.push_back(z);
                if (zeros.empty()) continue;
                const std::uint64_t knob_plans = o.knob_plans(zeros.size());
                const std::uint64_t per_micro_batch = o.placements.size() * knob_plans;
                for (std::size_t mb_index = 0; mb_index < o.micro_batches.size(); ++mb_index) {
                    const auto mb = o.micro_batches[mb_index];
                    plan.micro_batch_seqs = d(mb);
                    plan.microbatches = per_replica / d(mb);
                    plan.zero = zeros.front();
                    plan.vpp = 1;
                    LayoutWork work;
                    try {
                        scenario.plan = make_training_plan(plan, spec_.cluster.chips(), {spec_.seq_len, spec_.global_batch_seqs}, spec_.model,
                                                           spec_.chip, "plan");
                        scenario.strategy = spec_.strategies.at(plan.strategy);
                        apply_zero_stage(scenario.strategy, scenario.plan.zero_stage());
                        work = derive_layout_work(scenario);
                    } catch (const InputError& e) {
                        r.keep_example(Rejection::strategy_dims, ordinal, reason(e));
                        reject_bulk(Rejection::strategy_dims, per_micro_batch);
                        continue;
                    }
                    bool memory_checked = false;
                    for (std::size_t pi = 0; pi < o.placements.size(); ++pi) {
                        if (!meshes[pi]) {
                            reject_bulk(Rejection::placement, knob_plans);
                            continue;
                        }
                        plan.placement.clear();
                        for (std::uint8_t i = 0; i < o.placed_axes; ++i) plan.placement.emplace_back(kAxisNames[o.placements[pi][i]]);
                        LayoutCosts l;
                        std::swap(scenario.mesh, *meshes[pi]);  // no copy: swapped back below
                        try {
                            l = cost_layout(scenario, work, &acc.memo).costs;
                        } catch (const InputError& e) {  // a collective this topology cannot run (part of a custom graph)
                            r.keep_example(Rejection::placement, ordinal, reason(e));
                            std::swap(scenario.mesh, *meshes[pi]);
                            reject_bulk(Rejection::placement, knob_plans);
                            continue;
                        }
                        std::swap(scenario.mesh, *meshes[pi]);
                        if (!memory_checked) {
                            // The leanest knobs bound every plan of this micro-batch from below, and
                            // memory only grows with the micro-batch: past it nothing fits.
                            memory_checked = true;
                            StepKnobs lean;
                            lean.microbatches = plan.microbatches;
                            lean.recompute = static_cast<RecomputeModules>(RecomputeModule::layer);
                            lean.zero_stage = zeros.back();
                            lean.offload_optimizer = true;
                            if (estimate_memory(l, lean).total_bytes() > hbm) {
                                reject_bulk(Rejection::memory, (o.placements.size() - pi) * knob_plans +
                                                                   (o.micro_batches.size() - mb_index - 1) * per_micro_batch);
                                mb_index = o.micro_batches.size();
                                break;
                            }
                        }
                        run_knobs(o, zeros, l, plan, ordinal, acc);
                    }
                }
            }
        }
}

// Every schedule, recomputation, ZeRO stage, offload and overlap on one costed layout: memory first,
// then time; only plans that enter the top K or the front are written out.
void Search::run_knobs(const LayoutOptions& o, const std::vector<int>& zeros, const LayoutCosts& l, SearchedPlan& plan,
                       std::uint64_t& ordinal, Accumulator& acc) const {
    TrainSearchResult& r = acc.result;
    const double hbm = spec_.chip.hbm_bytes;
    const std::uint64_t schedule_plans = o.knob_plans(zeros.size()) / o.schedules.size();
    StepKnobs k;
    k.microbatches = plan.microbatches;
    StepParts parts{};
    for (const ScheduleOption& s : o.schedules) {
        k.schedule = s.schedule;
        k.virtual_stages = d(s.vpp);
        plan.schedule = s.schedule;
        plan.vpp = s.vpp;
        if (s.schedule == PipelineSchedule::interleaved && std::fmod(plan.microbatches, d(plan.pp)) != 0.0) {
            r.rejected[static_cast<std::size_t>(Rejection::interleave_microbatches)] += schedule_plans;
            r.plans_evaluated += schedule_plans;
            ordinal += schedule_plans;
            continue;
        }
        // Memory does not depend on the overlaps: one estimate serves all of them, fitting or not.
        const std::uint64_t overlap_plans = o.overlaps.size() * o.tp_overlaps.size();
        for (const RecomputePolicy& rc : o.recomputes)
            for (const int zero : zeros)
                for (const bool offload : o.offloads) {
                    k.recompute = rc.modules;
                    k.offload_activations = rc.offload;
                    k.zero_stage = zero;
                    k.offload_optimizer = offload;
                    const double memory = estimate_memory(l, k).total_bytes();
                    if (memory > hbm) {
                        r.rejected[static_cast<std::size_t>(Rejection::memory)] += overlap_plans;
                        r.plans_evaluated += overlap_plans;
                        ordinal += overlap_plans;
                        continue;
                    }
                    // Where even the floor under every overlap setting (at the block's first, most
                    // favoured ordinal) enters neither the top K nor the front, none of them can.
                    if (!spec_.reference_step_time_s) {
                        const double floor_s = step_time_floor_s(l, k);
                        if (!acc.top.admits(floor_s, memory, ordinal) && !acc.pareto.admits(memory, floor_s, {floor_s, memory, 0, ordinal})) {
                            r.plans_evaluated += overlap_plans;
                            r.plans_costed += overlap_plans;
                            ordinal += overlap_plans;
                            continue;
                        }
                    }
                    for (const bool overlap : o.overlaps)
                        for (const bool tp_overlap : o.tp_overlaps) {
                            k.overlap_data_parallel = overlap;
                            k.overlap_tensor_parallel = tp_overlap;
                            k.overlap_expert_parallel = plan.ep_overlap;
                            const std::uint64_t this_ordinal = ordinal++;
                            ++r.plans_evaluated;
                            const double step_s = estimate_step_time(l, k, parts);
                            ++r.plans_costed;
                            if (spec_.reference_step_time_s && step_s < *spec_.reference_step_time_s) ++r.plans_faster_than_reference;
                            const bool top = acc.top.admits(step_s, memory, this_ordinal);
                            const bool front = acc.pareto.admits(memory, step_s, {step_s, memory, 0, this_ordinal});
                            if (!top && !front) continue;
                            plan.recompute = rc;
                            plan.zero = zero;
                            plan.offload_optimizer = offload;
                            plan.overlap = overlap;
                            plan.tp_overlap = tp_overlap;
                            plan.step_time_s = step_s;
                            plan.memory_bytes = memory;
                            plan.ordinal = this_ordinal;
                            if (top) acc.top.insert(plan);
                            if (front) acc.pareto.insert(plan);
                        }
                }
    }
}

TrainSearchResult Search::run() {
    check_fixed();
    const std::vector<Unit> work = units();
    const unsigned threads = search_threads(spec_.threads);
    std::vector<Accumulator> accs(threads, Accumulator(spec_.top_k));
    std::atomic<std::size_t> next{0};
    std::atomic<std::uint64_t> plans_done{0};
    std::vector<std::exception_ptr> failures(threads);
    const auto worker = [&](Accumulator& acc, std::exception_ptr& failure) {
        try {
            TrainingScenario scenario;
            static_cast<TrainingJob&>(scenario) = spec_;
            const bool reports = &acc == &accs[0] && spec_.progress;
            for (std::size_t i = next++; i < work.size(); i = next++) {
                const std::uint64_t before = acc.result.plans_evaluated;
                run_unit(work[i], static_cast<std::uint64_t>(i) << 40, acc, scenario);
                plans_done += acc.result.plans_evaluated - before;
                if (reports) spec_.progress(static_cast<double>(std::min(next.load(), work.size())) / static_cast<double>(work.size()), plans_done.load());
            }
        } catch (...) {
            failure = std::current_exception();
            next = work.size();  // the others stop at their next unit
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, std::ref(accs[t]), std::ref(failures[t]));
    worker(accs[0], failures[0]);
    for (auto& thread : pool) thread.join();
    for (const auto& failure : failures)
        if (failure) std::rethrow_exception(failure);

    TrainSearchResult out;
    TopPlans top(spec_.top_k);
    PlanFront pareto;
    for (const Accumulator& acc : accs) {
        out.plans_evaluated += acc.result.plans_evaluated;
        out.plans_costed += acc.result.plans_costed;
        out.plans_faster_than_reference += acc.result.plans_faster_than_reference;
        for (std::size_t i = 0; i < kRejections; ++i) {
            out.rejected[i] += acc.result.rejected[i];
            const auto& e = acc.result.examples[i];
            if (!e.reason.empty()) out.keep_example(static_cast<Rejection>(i), e.ordinal, e.reason);
        }
        for (const SearchedPlan& p : acc.top.plans())
            if (top.admits(p.step_time_s, p.memory_bytes, p.ordinal)) top.insert(p);
        for (const SearchedPlan& p : acc.pareto.items())
            if (pareto.admits(p.x(), p.y(), p.rank())) pareto.insert(p);
    }
    if (out.plans_evaluated == 0)
        throw InputError("search", "fixed knobs", "no plan on " + text(spec_.cluster.chips()) + " chips matches the knobs given together "
                                                 "(a vpp or schedule no pipeline split of " + text(spec_.model.n_layers) + " layers allows?)");
    out.top = top.plans();
    out.pareto = pareto.items();
    return out;
}

}  // namespace


std::vector<std::string> strategies_needed(const SearchConstraints& fixed) {
    if (const auto strategy = fixed.knob(&Plan::strategy)) return {*strategy};
    return {"fsdp", "fsdp-tp", "megatron-3d", "megatron-3d-sp", "megatron-3d-etp1", "megatron-3d-sp-etp1"};
}

unsigned search_threads(unsigned requested) {
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    return requested == 0 ? cores : std::min(requested, cores);
}

TrainSearchResult search_training(const TrainSearchSpec& spec) {
    // A stack whose attention kernels the chip lacks fails every plan alike: refuse it once, by name.
    (void)attention_family(spec.chip, spec.stack.attention);
    return Search(spec).run();
}

}  // namespace ridgeline
