#pragma once
// --from torchtitan: a torchtitan v0.2.2 TOML job file as a plan (names: emitters/torchtitan.json).
#include <cstdint>
#include <filesystem>

#include "from/launch_config.hpp"
#include "from/setting_reader.hpp"
#include "model/model_spec.hpp"

namespace ridgeline {

// `chips`: from the command line (a job file does not say how many GPUs run it). The model the
// file names (model.name and flavor) must have `model`'s shape.
[[nodiscard]] LaunchConfig read_torchtitan(const SettingReader& r, const ModelSpec& model, std::int64_t chips,
                                           const std::filesystem::path& data_dir);

}  // namespace ridgeline
