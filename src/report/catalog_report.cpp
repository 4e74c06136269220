#include <nlohmann/json.hpp>

#include "report/reports.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {
// Keeps a listing to one screen line per entry; the JSON face carries the full text.
std::string shorten(const std::string& text) {
    constexpr std::size_t kMaxChars = 72;
    return text.size() <= kMaxChars ? text : text.substr(0, kMaxChars - 3) + "...";
}
}  // namespace

std::string catalog_table(const std::vector<CatalogGroup>& groups) {
    std::string text;
    for (const auto& group : groups) {
        Table table({group.kind, "aliases", "description"});
        for (const auto& entry : group.entries) {
            std::string aliases;
            for (const auto& alias : entry.aliases) aliases += (aliases.empty() ? "" : ", ") + alias;
            table.add_row({entry.name, shorten(aliases), shorten(entry.description)});
        }
        text += table.render() + "\n";
    }
    return text;
}

std::string catalog_json(const std::string& schema, const std::vector<CatalogGroup>& groups) {
    nlohmann::json doc;
    doc["schema"] = schema;
    for (const auto& group : groups) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& entry : group.entries)
            list.push_back({{"name", entry.name}, {"aliases", entry.aliases}, {"description", entry.description},
                            {"file", entry.file.string()}});
        doc[group.kind] = list;
    }
    return doc.dump(2);
}

}  // namespace ridgeline::report
