#pragma once
// Leave-one-source-out cross-validation: every fitted stack parameter is refitted with one source's
// records left out, and that source is predicted with the refit; a stack with no records left is
// priced by the pooled fit of all the others (never at zero overhead). The accuracy Ridgeline
// quotes is this one, not the in-sample one.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "accuracy/like_runs.hpp"
#include "validation/stack_fit.hpp"

namespace ridgeline {

struct SliceSummary {
    std::string slice, key;  // "stack", "megatron"
    ErrorSummary abs;
    double signed_median = 0;
};

struct CrossValidation {
    bool serving = false;             // serving throughput: nothing fitted, nothing refitted
    std::vector<Residual> held_out;   // one per record, predicted with its source left out
    std::vector<double> in_sample;    // the same records with every stack fitted on all sources
    ErrorSummary overall, in_sample_overall;
    double signed_median = 0, in_sample_signed_median = 0;
    std::vector<SliceSummary> slices;  // by source, stack family, chip family, dense/MoE, scale
    // Fitted on all sources: each stack with enough records, and the pooled fit for the rest.
    std::map<std::string, StackFit> fits;         // stacks with enough records of their own
    std::map<std::string, StackFit> family_fits;  // each family on all its records
    StackFit pooled;
    // Coverage of the 90% intervals drawn for each held-out run from the other runs' residuals (as a
    // user's query gets one), and from other sources' only (a run of a source never seen).
    struct Coverage {
        int covered = 0, with_interval = 0;
    };
    Coverage run_coverage, source_coverage;
    // Serving: the measured latencies' errors (quantity "ttft_mean", ...), and the coverage of
    // 90% intervals drawn for each from the other runs' errors of the same quantity.
    std::vector<Residual> latency_held_out;
    std::map<std::string, Coverage> latency_coverage;
    std::vector<std::string> held_fixed;  // fitted values not refitted per fold (chip efficiencies), with their origin
    std::vector<RecordResult> skipped;
};

// Parameters held at their neutral value (0, or 1 for the sharded share): in every fit, or only in the
// fit pooled across families that prices a stack whose family has too few records (what one code
// base's runs show may not carry over to another's; a family's fit is held as a stack's own is), or
// in one family's fits (its own stacks' and the family's, never borrowed from a wider fit): what its
// runs cannot tell apart from another overhead must not be carried to its other runs.
// InputError when the records hold fewer than two sources, or a source with a single record.
struct HeldParameters {
    std::set<std::string> everywhere, when_pooled;
    std::map<std::string, std::set<std::string>> in_family;  // family -> parameters
};
[[nodiscard]] CrossValidation cross_validate(FitCases cases, const HeldParameters& held = {});
// Serving records (kind "serve"; the rest are ignored): nothing is fitted on them, so each
// prediction is already held out and in sample equals out of sample; the same slices and interval
// coverage. The same InputErrors on too few sources or records.
[[nodiscard]] CrossValidation cross_validate_serving(const std::vector<RecordResult>& results);

}  // namespace ridgeline
