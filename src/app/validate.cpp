#include "app/validate.hpp"

#include <algorithm>

#include "accuracy/residuals_file.hpp"
#include "core/error.hpp"
#include "validation/run_record.hpp"
#include "validation/stack_fit.hpp"

namespace ridgeline::app {

ValidateOutcome validate(const ValidateRequest& request, const std::function<void(std::size_t done, std::size_t total)>& progress) {
    std::vector<RunRecord> records = load_run_records(request.file, request.data_dir);
    std::erase_if(records, [&](const RunRecord& r) { return r.source_key.find(request.source) == std::string::npos; });
    if (records.empty())
        throw InputError("--source", "", "no record of " + request.file.string() + " has a source key containing \"" + request.source + "\"");
    ValidateOutcome outcome{validate_records(records, request.data_dir, progress), std::nullopt, {}};
    if (!request.cross_validate) return outcome;
    // Nothing is fitted on serving runs: a file of them alone is held out as it stands.
    if (std::all_of(records.begin(), records.end(), [](const RunRecord& r) { return r.kind == "serve"; })) {
        if (request.hold || request.hold_pooled || request.hold_in_family)
            throw InputError(request.hold ? "--hold" : request.hold_pooled ? "--hold-pooled" : "--hold-in-family", "",
                             "nothing is fitted on serving records: there is no parameter to hold");
        outcome.cross_validation = cross_validate_serving(outcome.result.records);
        return outcome;
    }
    const FitPolicy policy = load_fit_policy(request.data_dir);
    for (const std::string& name : request.hold.value_or(policy.held))
        if (name != "none") outcome.held.everywhere.insert(name);
    for (const std::string& name : request.hold_pooled.value_or(policy.held_when_pooled))
        if (name != "none") outcome.held.when_pooled.insert(name);
    FitCases cases = build_fit_cases(records, request.data_dir);
    for (const std::string& entry : request.hold_in_family.value_or(policy.held_in_family)) {
        if (entry == "none") continue;
        const auto held = family_parameter(entry);
        if (!held) throw InputError("--hold-in-family", "", "\"" + entry + "\" is not family:stack_parameter");
        // The policy's holds of a family these records lack hold nothing here; one asked for is a mistake.
        if (std::none_of(cases.cases.begin(), cases.cases.end(), [&](const FitCase& c) { return c.scenario.stack.family == held->first; })) {
            if (!request.hold_in_family) continue;
            throw InputError("--hold-in-family", "", "no fitted record of " + request.file.string() + " runs a stack of family \"" + held->first + "\"");
        }
        outcome.held.in_family[held->first].insert(held->second);
    }
    outcome.cross_validation = cross_validate(std::move(cases), outcome.held);
    return outcome;
}

}  // namespace ridgeline::app
