#include "validation/cross_validate.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "accuracy/training_interval.hpp"
#include "core/error.hpp"

namespace ridgeline {

namespace {

double signed_median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Every fit starts from no overhead at all, so a fold learns nothing from the shipped values.
const StackParams kNeutral{0.0, 0.0, 0.0, 1.0};

std::vector<SliceSummary> summarize_slices(const std::vector<Residual>& held_out, bool serving) {
    std::map<std::pair<std::string, std::string>, std::vector<double>> groups;
    for (const Residual& r : held_out) {
        groups[{"source", r.source}].push_back(r.error);
        groups[{serving ? "engine" : "stack", r.kind.stack_family}].push_back(r.error);
        groups[{"chip", r.kind.chip_family}].push_back(r.error);
        groups[{"model", r.kind.moe ? "MoE" : "dense"}].push_back(r.error);
        groups[{"scale", scale_bucket(r.kind.chips)}].push_back(r.error);
        groups[{"parameters", r.kind.params}].push_back(r.error);
    }
    std::vector<SliceSummary> slices;
    for (const auto& [key, errors] : groups) slices.push_back({key.first, key.second, summarize_errors(errors), signed_median(errors)});
    return slices;
}

void check_sources(const std::map<std::string, int>& per_source) {
    if (per_source.size() < 2)
        throw InputError("--cross-validate", "", "leaving one source out needs records of at least two sources; these have " +
                                                      std::to_string(per_source.size()));
    for (const auto& [source, count] : per_source)
        if (count < 2)
            throw InputError("--cross-validate", "", "source " + source +
                                                          " has a single record: its held-out error would be that record's alone; "
                                                          "give it more records or leave it out with --source");
}

// Whether the 90% interval drawn for `r` from `pool` without what `out` drops holds r's error.
void add_coverage(CrossValidation::Coverage& c, const std::vector<Residual>& pool, const Residual& r, const LeaveOut& out) {
    const PredictionInterval i = prediction_interval(pool, r.kind, 0.9, out, r.quantity);
    if (!i.available) return;
    ++c.with_interval;
    c.covered += 1.0 + r.error >= i.low_factor && 1.0 + r.error <= i.high_factor;
}

// The summaries, slices and interval coverage of the held-out errors and the in-sample ones.
void summarize(CrossValidation& cv) {
    std::vector<double> errors;
    for (const Residual& r : cv.held_out) errors.push_back(r.error);
    cv.overall = summarize_errors(errors);
    cv.signed_median = signed_median(errors);
    cv.in_sample_overall = summarize_errors(cv.in_sample);
    cv.in_sample_signed_median = signed_median(cv.in_sample);
    cv.slices = summarize_slices(cv.held_out, cv.serving);
    for (const Residual& r : cv.held_out) {
        add_coverage(cv.run_coverage, cv.held_out, r, {r.id, ""});
        add_coverage(cv.source_coverage, cv.held_out, r, {"", r.source});
    }
    for (const Residual& r : cv.latency_held_out) add_coverage(cv.latency_coverage[r.quantity], cv.latency_held_out, r, {r.id, ""});
}

// The cases `keep` holds, in order.
template <class Keep>
std::vector<FitCase*> select(const std::vector<FitCase*>& cases, Keep keep) {
    std::vector<FitCase*> out;
    for (FitCase* c : cases)
        if (keep(*c)) out.push_back(c);
    return out;
}

// "own", "family" or "pooled": how the stack's parameters came (like_runs.hpp).
RunKind run_kind(const FitCase& c, const std::string& params) {
    RunKind kind = training_run_kind(c.scenario);
    kind.params = params;
    return kind;
}

// `fit` with each parameter its records could not fit (no sharded runs, no scaling series) taken
// from `wider` where that fit has it: wider evidence, never the optimistic neutral value. Records
// that shard over links at their datasheet rate (TPU ICI) keep the sharded share whole: the rest of
// their fit is already of sharded plans, and the share cannot be told from the links'. From the fit
// pooled across families only the sharded share: its rank_time_cv stands in for the per-layer and
// per-step costs the fit policy keeps out of it, and borrowed, it cost the cross-validated error.
// What the family holds neutral (`held`) stays neutral.
StackFit borrow(StackFit fit, const StackFit* wider, const std::string& from, const std::set<std::string>& held) {
    if (!wider) return fit;
    const auto has = [](const StackFit& f, const std::string& name) { return std::find(f.fitted.begin(), f.fitted.end(), name) != f.fitted.end(); };
    for (const auto& [name, member] : kStackParamMembers) {
        const bool share = std::string(name) == "sharded_comm_efficiency";
        if ((from == "pooled" && !share) || (share && fit.sharded_records >= kMinFitRecords) || held.count(name)) continue;
        if (!has(fit, name) && has(*wider, name)) {
            fit.params.*member = wider->params.*member;
            fit.fitted.emplace_back(name);
            fit.borrowed[name] = wider->borrowed.count(name) ? wider->borrowed.at(name) : from;
        }
    }
    return fit;
}

// The parameters a stack gets from the records at hand: its own fit with enough records, else the
// fit of its family's other stacks, else the pooled fit of all records, each rung filling what the
// one before could not fit (borrow). Never zero overhead. A family shares its code base, so its fit
// frees what a stack's own fit would; only the pool across families holds the policy's
// `when_pooled` parameters, and only a family's own fits its `in_family` ones.
class FitLadder {
public:
    FitLadder(std::vector<FitCase*> cases, const HeldParameters& held)
        : cases_(std::move(cases)), held_(held.everywhere), pooled_held_(held.everywhere), in_family_(held.in_family) {
        pooled_held_.insert(held.when_pooled.begin(), held.when_pooled.end());
    }
    std::pair<StackParams, std::string> params_for(const std::string& stack, const std::string& family) {
        if (const StackFit* own = own_fit(stack, family)) return {own->params, "own"};
        if (const StackFit* kin = family_fit(family, stack)) return {kin->params, "family"};
        return {pooled().params, "pooled"};
    }

    const StackFit& pooled() {
        if (!pooled_) pooled_ = fit_stack(cases_, kNeutral, pooled_held_);
        return *pooled_;
    }

    std::map<std::string, StackFit> family_fits() {
        std::map<std::string, StackFit> fits;
        std::set<std::string> families;
        for (const FitCase* c : cases_) families.insert(c->scenario.stack.family);
        for (const std::string& family : families)
            if (const StackFit* fit = family_fit(family, "")) fits[family] = *fit;
        return fits;
    }
    [[nodiscard]] const std::map<std::string, StackFit>& own_fits() const { return own_; }

private:
    // The stack's fit on its own records, with what they cannot fit from its family's and the pool's;
    // null with too few records.
    const StackFit* own_fit(const std::string& stack, const std::string& family) {
        if (!own_.count(stack)) {
            const auto own = select(cases_, [&](const FitCase& c) { return c.stack == stack; });
            if (static_cast<int>(own.size()) < kMinFitRecords) return nullptr;
            const std::set<std::string> held = held_in(family);
            own_[stack] = borrow(borrow(fit_stack(own, kNeutral, held), family_fit(family, ""), "family", held), &pooled(), "pooled", held);
        }
        return &own_.at(stack);
    }
    // The fit of the family's records but `without`'s (all of them with ""), with the pool's sharded
    // share where they have none; null with too few records.
    const StackFit* family_fit(const std::string& family, const std::string& without) {
        const std::string key = family + " without " + without;
        if (!family_.count(key)) {
            const auto kin = select(cases_, [&](const FitCase& c) { return c.stack != without && c.scenario.stack.family == family; });
            const std::set<std::string> held = held_in(family);
            family_[key] = static_cast<int>(kin.size()) >= kMinFitRecords
                               ? std::optional(borrow(fit_stack(kin, kNeutral, held), &pooled(), "pooled", held))
                               : std::nullopt;
        }
        return family_[key] ? &*family_[key] : nullptr;
    }
    // What every fit holds, with what the family's own fits hold too.
    [[nodiscard]] std::set<std::string> held_in(const std::string& family) const {
        std::set<std::string> held = held_;
        if (const auto it = in_family_.find(family); it != in_family_.end()) held.insert(it->second.begin(), it->second.end());
        return held;
    }

    std::vector<FitCase*> cases_;
    std::set<std::string> held_, pooled_held_;
    std::map<std::string, std::set<std::string>> in_family_;
    std::map<std::string, StackFit> own_;
    std::map<std::string, std::optional<StackFit>> family_;
    std::optional<StackFit> pooled_;
};

}  // namespace

CrossValidation cross_validate(FitCases input, const HeldParameters& policy) {
    CrossValidation cv;
    cv.skipped = std::move(input.skipped);
    std::vector<FitCase>& cases = input.cases;
    std::map<std::string, int> per_source;
    for (const FitCase& c : cases) ++per_source[c.source];
    check_sources(per_source);
    for (const FitCase& c : cases) {
        const ChipSpec& chip = c.scenario.chip;
        const std::string held = chip.name + ": its efficiency block (collective and HBM shares)";
        if (chip.efficiency_from_file && std::find(cv.held_fixed.begin(), cv.held_fixed.end(), held) == cv.held_fixed.end())
            cv.held_fixed.push_back(held);
    }

    std::vector<FitCase*> all_cases;
    for (FitCase& c : cases) all_cases.push_back(&c);
    const auto of = [&](auto keep) { return select(all_cases, keep); };
    std::vector<std::string> stacks;  // in the records' order
    for (const FitCase& c : cases)
        if (std::find(stacks.begin(), stacks.end(), c.stack) == stacks.end()) stacks.push_back(c.stack);

    // Out of sample: each source predicted by fits that never saw it.
    cv.held_out.resize(cases.size());
    for (const auto& entry : per_source) {
        const std::string& source = entry.first;  // a named reference: clang 14 cannot capture a structured binding
        FitLadder ladder(of([&](const FitCase& c) { return c.source != source; }), policy);
        for (const std::string& stack : stacks) {
            const auto held = of([&](const FitCase& c) { return c.source == source && c.stack == stack; });
            if (held.empty()) continue;
            const auto [params, from] = ladder.params_for(stack, held.front()->scenario.stack.family);
            for (FitCase* c : held) {
                const auto index = static_cast<std::size_t>(c - cases.data());
                cv.held_out[index] = {c->id, c->source, run_kind(*c, from), case_error(*c, params)};
            }
        }
    }
    // In sample: the same ladder on all sources; what scripts/fit_stacks.py writes.
    FitLadder all(of([](const FitCase&) { return true; }), policy);
    cv.in_sample.resize(cases.size());
    for (const std::string& stack : stacks) {
        const auto own = of([&](const FitCase& c) { return c.stack == stack; });
        const auto [params, from] = all.params_for(stack, own.front()->scenario.stack.family);
        for (FitCase* c : own) cv.in_sample[static_cast<std::size_t>(c - cases.data())] = case_error(*c, params);
    }
    cv.fits = all.own_fits();
    cv.family_fits = all.family_fits();
    cv.pooled = all.pooled();

    summarize(cv);
    return cv;
}

CrossValidation cross_validate_serving(const std::vector<RecordResult>& results) {
    CrossValidation cv;
    cv.serving = true;
    std::map<std::string, int> per_source;
    for (const RecordResult& r : results) {
        if (r.kind != "serve") continue;
        if (!r.ok) {
            cv.skipped.push_back(r);
            continue;
        }
        ++per_source[r.source];
        cv.held_out.push_back({r.id, r.source, r.like, r.error});
        cv.in_sample.push_back(r.error);
        if (r.ttft) cv.latency_held_out.push_back({r.id, r.source, r.like, r.ttft->error(), "ttft_" + r.ttft->statistic});
        if (r.itl) cv.latency_held_out.push_back({r.id, r.source, r.like, r.itl->error(), "itl_" + r.itl->statistic});
    }
    check_sources(per_source);
    summarize(cv);
    return cv;
}

}  // namespace ridgeline
