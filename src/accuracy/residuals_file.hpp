#pragma once
// Reading the held-out residuals (ridgeline.residuals/1) that `validate --cross-validate
// --write-residuals` writes; the shipped file is accuracy/held-out-residuals.json.
#include <filesystem>
#include <vector>

#include "accuracy/like_runs.hpp"

namespace ridgeline {

// InputError naming the file and field for a malformed file; an empty list when the data folder
// has no residuals file (intervals then say so).
[[nodiscard]] std::vector<Residual> load_residuals(const std::filesystem::path& path);
[[nodiscard]] std::filesystem::path residuals_path(const std::filesystem::path& data_dir);

}  // namespace ridgeline
