#pragma once
// A training job written down (format ridgeline.scenario/1): model, hardware, chips, workload and
// plan, so that a what-if can be kept, shared and re-run.
#include <filesystem>

#include "scenario/training_setup.hpp"

namespace ridgeline {

struct ScenarioFile {
    TrainingSetup setup;
    double train_tokens = 0;  // 0 when the file gives none
    double global_batch_tokens = 0;  // the batch as the file gives it in tokens (0: in sequences)
};

[[nodiscard]] ScenarioFile load_scenario_file(const std::filesystem::path& path, const std::filesystem::path& data_dir);

}  // namespace ridgeline
