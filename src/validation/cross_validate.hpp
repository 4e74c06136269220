#pragma once
// Leave-one-source-out cross-validation: every fitted stack parameter is refitted with one source's
// records left out, and that source is predicted with the refit; a stack with no records left is
// priced by the pooled fit of all the others (never at zero overhead). The accuracy Ridgeline
// quotes is this one, not the in-sample one.
#include <map>
#include <optional>
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
    std::vector<std::string> held_fixed;  // fitted values not refitted per fold (chip efficiencies), with their origin
    std::vector<RecordResult> skipped;
};

// Parameters held at their neutral value (0, or 1 for the sharded share): in every fit, or only in the
// pooled fits that price a stack from other stacks' records (what a stack's own runs show may not
// carry over to another). InputError when the records hold fewer than two sources, or a source with
// a single record.
struct HeldParameters {
    std::set<std::string> everywhere, when_pooled;
};
[[nodiscard]] CrossValidation cross_validate(FitCases cases, const HeldParameters& held = {});

// "own", "family" or "pooled": how the stack's parameters came (like_runs.hpp).
[[nodiscard]] RunKind run_kind(const FitCase& c, const std::string& params);

// The parameters a stack gets from the records at hand: its own fit with enough records, else the
// pooled fit of its family's other stacks, else the pooled fit of all records. Never zero overhead.
class FitLadder {
public:
    FitLadder(std::vector<FitCase*> cases, HeldParameters held);
    [[nodiscard]] std::pair<StackParams, std::string> params_for(const std::string& stack, const std::string& family);
    [[nodiscard]] const StackFit& pooled();
    [[nodiscard]] const std::map<std::string, StackFit>& own_fits() const { return own_; }
    // Each family's pooled fit on all its records (what a stack of the family without records of its own takes).
    [[nodiscard]] std::map<std::string, StackFit> family_fits();

private:
    template <class Keep>
    [[nodiscard]] std::vector<FitCase*> select(Keep keep) const {
        std::vector<FitCase*> out;
        for (FitCase* c : cases_)
            if (keep(*c)) out.push_back(c);
        return out;
    }
    std::vector<FitCase*> cases_;
    std::set<std::string> own_held_, pooled_held_;
    std::map<std::string, StackFit> own_, family_;
    std::optional<StackFit> pooled_;
};

}  // namespace ridgeline
