#pragma once
// Name lookup over a folder of description files (hardware/chips, models, ...): each file
// declares a name and aliases; users type either.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ridgeline {

struct CatalogEntry {
    std::string name;
    std::vector<std::string> aliases;
    std::string description;
    std::filesystem::path file;
};

namespace io {

// Reads name, aliases and description of every *.json in `folder`, sorted by name.
[[nodiscard]] std::vector<CatalogEntry> list_catalog(const std::filesystem::path& folder);
// Case-insensitive match on name or alias.
[[nodiscard]] std::optional<CatalogEntry> find_entry(const std::vector<CatalogEntry>& entries, const std::string& name);
[[nodiscard]] std::string known_names(const std::vector<CatalogEntry>& entries);
// A name ending in .json, or naming an existing file, is a file; anything else is a catalog name
// (aliases such as "meta-llama/Meta-Llama-3-70B" contain slashes).
[[nodiscard]] bool looks_like_path(const std::string& name);
// The file a user means by `name_or_path`: the path itself, or the catalog entry of that name.
// InputError naming the request's `field` and the known names otherwise.
[[nodiscard]] std::filesystem::path catalog_file(const std::string& name_or_path, const std::vector<CatalogEntry>& entries,
                                                 const std::string& field);

}  // namespace io
}  // namespace ridgeline
