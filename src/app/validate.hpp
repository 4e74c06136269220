#pragma once
// `validate` as a request in and an outcome out: a run-record file's records (those of the sources
// asked for) predicted and, with cross-validation, every stack parameter refitted with each source
// left out. The CLI only parses flags into the request and prints the outcome.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "validation/cross_validate.hpp"
#include "validation/validate.hpp"

namespace ridgeline::app {

struct ValidateRequest {
    std::filesystem::path file;  // a ridgeline.run-record/1 file
    std::string source;          // only records whose source key contains this ("": all)
    bool cross_validate = false;
    // Parameters never fitted, those fitted on a stack's own records only, and those held in one
    // family's fits ("family:parameter"), in place of the fit policy's lists
    // (accuracy/fit-policy.json); "none" in a list holds nothing.
    std::optional<std::vector<std::string>> hold, hold_pooled, hold_in_family;
    std::filesystem::path data_dir;
};

struct ValidateOutcome {
    ValidationResult result;
    std::optional<CrossValidation> cross_validation;
    HeldParameters held;  // what the cross-validation held
};

// InputError naming the request's field (--source) when no record is left to predict, a family to
// hold a parameter in that no stack of the records belongs to (--hold-in-family), or the
// cross-validation's own (fewer than two sources). A file of serving records alone is
// cross-validated as serving (nothing is fitted on them); elsewhere the training records are.
// `progress` hears how many records are done.
[[nodiscard]] ValidateOutcome validate(const ValidateRequest& request,
                                       const std::function<void(std::size_t done, std::size_t total)>& progress = {});

}  // namespace ridgeline::app
