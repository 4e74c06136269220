#pragma once
// Reading the held-out residuals (ridgeline.residuals/1) that `validate --cross-validate
// --write-residuals` writes; the shipped file is accuracy/held-out-residuals.json.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accuracy/like_runs.hpp"

namespace ridgeline {

// InputError naming the file and field for a malformed file; an empty list when the data folder
// has no residuals file (intervals then say so).
[[nodiscard]] std::vector<Residual> load_residuals(const std::filesystem::path& path);
[[nodiscard]] std::filesystem::path residuals_path(const std::filesystem::path& data_dir);
// Serving runs' throughput and latency errors, which serve and search serve draw their intervals
// from (nothing is fitted on them).
[[nodiscard]] std::filesystem::path serving_residuals_path(const std::filesystem::path& data_dir);

// The stack parameters the fits hold at no overhead because fitting them raised the cross-validated
// error (accuracy/fit-policy.json, ridgeline.fit-policy/1, written by scripts/fit_stacks.py): in
// every fit, in the fit pooled across families only, or in one family's fits; none where the data
// folder has no such file.
struct FitPolicy {
    std::vector<std::string> held;              // in every fit
    std::vector<std::string> held_when_pooled;  // in the fit pooled across families only (own and family fits keep them)
    std::vector<std::string> held_in_family;    // "family:parameter": in that family's own and family fits only
};
[[nodiscard]] FitPolicy load_fit_policy(const std::filesystem::path& data_dir);
[[nodiscard]] bool is_stack_parameter(const std::string& name);
// "family:parameter" split at its colon; nullopt unless both parts are there and the second is a
// stack parameter.
[[nodiscard]] std::optional<std::pair<std::string, std::string>> family_parameter(const std::string& text);

}  // namespace ridgeline
