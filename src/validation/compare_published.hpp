#pragma once
// Published, tuned plans against the search: for each training record, the search over the same
// model, hardware, chips and batch, where the published plan ranks among the valid plans it finds
// and how much faster Ridgeline's best plan is predicted to be. A tuned plan far down the ranking
// is a modelling error to understand.
#include <filesystem>
#include <string>
#include <vector>

#include "search/train_search.hpp"
#include "validation/run_record.hpp"

namespace ridgeline {

struct PublishedComparison {
    std::string id, source;
    bool ok = false;
    std::string reason;                   // why it was skipped
    double published_step_s = 0;          // predicted for the published plan
    bool published_fits = true;
    double best_step_s = 0;
    SearchedPlan best;
    std::uint64_t plans_valid = 0;
    std::uint64_t rank = 0;               // 1 + valid plans predicted faster than the published one
    [[nodiscard]] double percentile() const { return plans_valid ? static_cast<double>(rank) / static_cast<double>(plans_valid) : 1.0; }
    [[nodiscard]] double predicted_gain() const { return published_step_s / best_step_s - 1.0; }
};

// Records of kind train whose source key contains `source_filter` (all when empty).
[[nodiscard]] std::vector<PublishedComparison> compare_published(const std::vector<RunRecord>& records,
                                                                 const std::filesystem::path& data_dir,
                                                                 const std::string& source_filter, unsigned threads);

}  // namespace ridgeline
