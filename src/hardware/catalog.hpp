#pragma once
// Finding and loading hardware descriptions (hardware/chips/*.json, hardware/systems/*.json).
// This is the I/O edge: the engine only ever sees the parsed specs.
#include <filesystem>
#include <string>
#include <vector>

#include "hardware/system.hpp"
#include "io/catalog_lookup.hpp"

namespace ridgeline {

[[nodiscard]] ChipSpec load_chip_file(const std::filesystem::path& path);
[[nodiscard]] SystemSpec load_system_file(const std::filesystem::path& path);

// Resolves a short name or alias ("tpu-v5p", "dgx-h100", "h100") or a path to a chip or system
// file. A chip name brings its default system; a system name brings its chip. Unknown names
// are an InputError listing the known ones.
// InputError naming the chip when it has no kernel data to price work with (see has_kernel_data).
void require_kernel_data(const ChipSpec& chip);

[[nodiscard]] Hardware resolve_hardware(const std::string& name_or_path, const std::filesystem::path& data_dir);

[[nodiscard]] std::vector<CatalogEntry> list_chips(const std::filesystem::path& data_dir);
[[nodiscard]] std::vector<CatalogEntry> list_systems(const std::filesystem::path& data_dir);

}  // namespace ridgeline
