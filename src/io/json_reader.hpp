#pragma once
// Strict reading of user-written JSON: every field is checked for presence, type and range,
// unknown keys (typos) are refused, and every error names the file and the dotted field path.
// Included only by loaders, so the JSON headers stay out of the engine.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/physical_range.hpp"

namespace ridgeline::io {

// Parses a whole file; malformed JSON or an unreadable file is an InputError naming the file.
[[nodiscard]] nlohmann::json parse_json_file(const std::filesystem::path& path);
// An input file's text: refused (InputError naming it) unless it is a regular file of at most 64 MiB,
// not a system pseudo-file (/proc, /sys, /dev): never a FIFO that blocks or a device that never ends.
[[nodiscard]] std::string read_input_file(const std::filesystem::path& path);
// True when `path` is a file this process read with read_input_file: a result written over it would
// replace what it was computed from (--html pointed at the --model file).
[[nodiscard]] bool was_read_as_input(const std::filesystem::path& path);
// Starts a command afresh: forgets the files read and the old-format warnings so far. A process
// that runs many commands (the Python module) would otherwise refuse a result whose file reuses
// the inode of one an earlier command read and deleted, and repeat old warnings.
void forget_inputs();

// Every file and report names its format and version under "schema" ("ridgeline.chip/1"). Files
// written before may say "format": still read, and listed for one warning each.
inline constexpr const char* kFormatKey = "schema";
inline constexpr const char* kOldFormatKey = "format";
// The id a document names, under either key ("" when it names none).
[[nodiscard]] std::string format_id(const nlohmann::json& document);
// The files read so far that used the old key, in order, each once.
[[nodiscard]] std::vector<std::string> files_with_old_format_key();

class JsonObject {
public:
    // `origin` names the file in errors; `path` is this object's dotted path within it.
    JsonObject(const nlohmann::json& value, std::string origin, std::string path = "");

    [[nodiscard]] bool has(const std::string& key) const;
    // The file's "schema" (or older "format") field must name exactly this format and version.
    void require_format(const std::string& expected);
    [[nodiscard]] std::string string(const std::string& key);
    [[nodiscard]] std::optional<std::string> optional_string(const std::string& key);
    [[nodiscard]] std::vector<std::string> string_list(const std::string& key);
    [[nodiscard]] bool boolean(const std::string& key, bool fallback);
    // Whole numbers >= 1 (JSON integers, or floats with no fractional part).
    [[nodiscard]] std::int64_t positive_int(const std::string& key);
    [[nodiscard]] std::optional<std::int64_t> optional_positive_int(const std::string& key);
    [[nodiscard]] std::int64_t non_negative_int(const std::string& key, std::int64_t fallback);
    [[nodiscard]] std::int64_t sourced_positive_int(const std::string& key);
    [[nodiscard]] std::vector<std::int64_t> positive_int_list(const std::string& key);
    // Finite numbers > 0. "sourced" fields may be a bare number or {"value": x, "source": "..."}.
    [[nodiscard]] double positive_number(const std::string& key);
    [[nodiscard]] double non_negative_number(const std::string& key);  // finite, >= 0
    [[nodiscard]] double sourced_positive_number(const std::string& key);
    [[nodiscard]] std::optional<double> optional_sourced_positive_number(const std::string& key);
    // The same, refused outside a plausible physical range (the error names value and range).
    [[nodiscard]] double sourced_in(const std::string& key, const PhysicalRange& range);
    [[nodiscard]] std::optional<double> optional_sourced_in(const std::string& key, const PhysicalRange& range);
    [[nodiscard]] JsonObject object(const std::string& key);
    // A required field of any type, for shapes the typed readers do not cover (arrays of pairs).
    [[nodiscard]] const nlohmann::json& raw(const std::string& key) { return require(key); }
    [[nodiscard]] std::optional<JsonObject> optional_object(const std::string& key);
    // Marks a key as known without reading it (free-text notes, sources).
    void allow(const std::string& key);
    // Keys of this object, in file order (for maps such as per-dtype peaks).
    [[nodiscard]] std::vector<std::string> keys() const;
    // Refuses any key that was never read or allowed: catches typos such as "d_modle".
    void finish() const;

    [[noreturn]] void fail(const std::string& key, const std::string& what) const;
    [[nodiscard]] std::string field_path(const std::string& key) const;
    [[nodiscard]] const std::string& origin() const { return origin_; }

private:
    const nlohmann::json& require(const std::string& key);
    // An optional field left out (or null, where that means the same): marked as read, true.
    bool skipped(const std::string& key, bool null_is_absent);
    std::int64_t to_int(const nlohmann::json& value, const std::string& key) const;
    std::string one_line(std::string text, const std::string& key) const;

    const nlohmann::json* value_;
    std::string origin_;
    std::string path_;
    std::set<std::string> seen_;
};

// The name and description a catalog file (chip, system, model, strategy) opens with; its
// aliases, where given, are read by the catalog's lookup.
[[nodiscard]] std::pair<std::string, std::string> read_named(JsonObject& root);

// A file of one format, parsed and opened at its root object: the first lines of every loader.
class JsonFile {
public:
    // InputError naming the file when it cannot be read, is not JSON or names another format.
    JsonFile(const std::filesystem::path& path, const std::string& format)
        : document_(parse_json_file(path)), root_(document_, path.string()) {
        root_.require_format(format);
    }
    JsonFile(const JsonFile&) = delete;
    JsonFile& operator=(const JsonFile&) = delete;
    [[nodiscard]] JsonObject& root() { return root_; }
    [[nodiscard]] const nlohmann::json& document() const { return document_; }

private:
    nlohmann::json document_;
    JsonObject root_;
};

}  // namespace ridgeline::io
