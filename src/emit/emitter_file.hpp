#pragma once
// Loading emitters/*.json (format ridgeline.emitter/1): strict, like every loader; a file must map
// exactly the settings its framework's emitter writes (emit/frameworks.hpp).
#include <filesystem>
#include <string>

#include "emit/emitter_spec.hpp"

namespace ridgeline {

[[nodiscard]] EmitterSpec load_emitter_file(const std::filesystem::path& path);
// By name (emitters/<name>.json) or file; InputError naming `flag` and the known names otherwise.
[[nodiscard]] EmitterSpec resolve_emitter(const std::string& name_or_path, const std::filesystem::path& data_dir,
                                          const std::string& flag);

}  // namespace ridgeline
