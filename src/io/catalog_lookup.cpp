#include "io/catalog_lookup.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"
#include "io/json_reader.hpp"

namespace ridgeline::io {

namespace {
std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}
}  // namespace

std::vector<CatalogEntry> list_catalog(const std::filesystem::path& folder) {
    std::vector<CatalogEntry> entries;
    std::error_code error;
    for (const auto& item : std::filesystem::directory_iterator(folder, error)) {
        if (item.path().extension() != ".json") continue;
        const nlohmann::json document = parse_json_file(item.path());
        CatalogEntry entry;
        entry.file = item.path();
        entry.name = document.is_object() ? document.value("name", item.path().stem().string()) : item.path().stem().string();
        if (document.is_object()) {
            entry.description = document.value("description", "");
            const auto aliases = document.find("aliases");
            if (aliases != document.end() && aliases->is_array())
                for (const auto& alias : *aliases)
                    if (alias.is_string()) entry.aliases.push_back(alias.get<std::string>());
        }
        entries.push_back(std::move(entry));
    }
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return entries;
}

std::optional<CatalogEntry> find_entry(const std::vector<CatalogEntry>& entries, const std::string& name) {
    const std::string wanted = lower(name);
    for (const auto& entry : entries) {
        if (lower(entry.name) == wanted) return entry;
        for (const auto& alias : entry.aliases)
            if (lower(alias) == wanted) return entry;
    }
    return std::nullopt;
}

std::string known_names(const std::vector<CatalogEntry>& entries) {
    std::string text;
    for (const auto& entry : entries) text += (text.empty() ? "" : ", ") + entry.name;
    return text.empty() ? "(none found)" : text;
}

bool looks_like_path(const std::string& name) {
    std::error_code error;
    return (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) ||
           std::filesystem::is_regular_file(name, error);
}

std::filesystem::path catalog_file(const std::string& name_or_path, const std::vector<CatalogEntry>& entries, const std::string& field) {
    if (looks_like_path(name_or_path)) return name_or_path;
    if (const auto entry = find_entry(entries, name_or_path)) return entry->file;
    throw InputError(kRequest, field, "unknown " + field + " \"" + name_or_path + "\"; known: " + known_names(entries));
}

}  // namespace ridgeline::io
