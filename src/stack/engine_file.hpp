#pragma once
// Serving engines' schedulers (engines/*.json, schema ridgeline.engine/1): each knob with where the
// engine sets it. The I/O edge: the simulator only sees SchedulerSpec.
#include <filesystem>
#include <string>
#include <vector>

#include "hardware/chip.hpp"
#include "inference/scheduler.hpp"
#include "io/catalog_lookup.hpp"

namespace ridgeline {

// InputError naming the file and field for a missing source, a knob out of range, or knobs that
// contradict each other (a budget below the cache block, a fraction outside (0, 1)).
[[nodiscard]] SchedulerSpec load_engine_file(const std::filesystem::path& path);
[[nodiscard]] SchedulerSpec resolve_engine(const std::string& name_or_path, const std::filesystem::path& data_dir);
[[nodiscard]] std::vector<CatalogEntry> list_engines(const std::filesystem::path& data_dir);
// The engine a serving run gets when none is named: vLLM, with the smaller batch defaults vLLM itself
// picks on A100s and GPUs under 70 GiB.
[[nodiscard]] std::string default_engine_name(const ChipSpec& chip);

}  // namespace ridgeline
