#pragma once
// --html FILE: besides the usual output, a self-contained page drawn from the command's JSON
// document (report/html). The target is checked before any work starts, and written atomically.
#include <string>

#include <CLI/CLI.hpp>

namespace ridgeline::cli {

struct HtmlTarget {
    std::string path;
    [[nodiscard]] bool wanted() const { return !path.empty(); }
    // InputError naming --html when the file could not be written: its folder missing or not
    // writable, or the path a folder. Call before the work.
    void check() const;
    // The page for `json_document` (ridgeline.train/1, ...), written over the file at the end.
    void write(const std::string& json_document) const;
};

void add_html_flag(CLI::App& command, HtmlTarget& target, const std::string& what);

}  // namespace ridgeline::cli
