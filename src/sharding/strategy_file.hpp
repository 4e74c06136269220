#pragma once
// Loading strategies/*.json (format ridgeline.strategy/1).
#include <filesystem>
#include <string>
#include <vector>

#include "io/catalog_lookup.hpp"
#include "sharding/strategy.hpp"

namespace ridgeline {

[[nodiscard]] Strategy load_strategy_file(const std::filesystem::path& path);
[[nodiscard]] Strategy resolve_strategy(const std::string& name_or_path, const std::filesystem::path& data_dir);
[[nodiscard]] std::vector<CatalogEntry> list_strategies(const std::filesystem::path& data_dir);

}  // namespace ridgeline
