#include "cli/html_flag.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/error.hpp"
#include "io/safe_write.hpp"
#include "report/html/html_report.hpp"

namespace ridgeline::cli {

void add_html_flag(CLI::App& command, HtmlTarget& target, const std::string& what) {
    command.add_option("--html", target.path, "also write a self-contained HTML report (" + what + ") to this file");
}

void HtmlTarget::check() const {
    if (!wanted()) return;
    namespace fs = std::filesystem;
    const fs::path file(path);
    const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
    std::error_code error;
    if (fs::is_directory(file, error)) throw InputError("--html", "", path + " is a folder; give a file name");
    if (!fs::is_directory(folder, error)) throw InputError("--html", "", "the folder " + folder.string() + " does not exist");
    if (::access(folder.c_str(), W_OK) != 0) throw InputError("--html", "", "the folder " + folder.string() + " is not writable");
    if (fs::exists(file, error) && ::access(file.c_str(), W_OK) != 0) throw InputError("--html", "", path + " exists and is not writable");
}

void HtmlTarget::write(const std::string& json_document) const {
    if (!wanted()) return;
    io::write_file_atomically(path, html::html_report(nlohmann::json::parse(json_document)));
}

}  // namespace ridgeline::cli
