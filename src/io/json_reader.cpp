#include "io/json_reader.hpp"

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <sstream>

#include <sys/stat.h>

#include "core/error.hpp"

namespace ridgeline::io {

namespace {
// Refuse files that cannot be a description: keeps memory and time bounded on hostile input.
constexpr std::uintmax_t kMaxJsonFileBytes = 64ull << 20;
// Dimensions beyond this overflow products such as layers * d_model * d_ff in int64.
constexpr double kMaxInteger = 1e12;
// No description nests deeper than a few levels; a hostile one could nest millions.
constexpr int kMaxJsonDepth = 64;
// Errors quote at most this much of a bad file.
constexpr std::size_t kMaxExcerpt = 160;

// Kernel and device pseudo-files are not descriptions (and may hold secrets such as the environment).
bool pseudo_file(const std::filesystem::path& path) {
    std::error_code error;
    const std::string real = std::filesystem::canonical(path, error).string();
    if (error) return false;
    for (const char* root : {"/proc/", "/sys/", "/dev/"})
        if (real.rfind(root, 0) == 0) return true;
    return false;
}

std::string excerpt(const std::string& text) { return text.size() <= kMaxExcerpt ? text : text.substr(0, kMaxExcerpt) + " ..."; }

std::string type_name(const nlohmann::json& value) { return value.type_name(); }
}  // namespace

namespace {

// The inputs read so far, by device and inode (so another name of the same file matches).
std::mutex inputs_mutex;
std::set<std::pair<dev_t, ino_t>>& inputs_read() {
    static std::set<std::pair<dev_t, ino_t>> files;
    return files;
}

}  // namespace

bool was_read_as_input(const std::filesystem::path& path) {
    struct stat s {};
    if (::stat(path.c_str(), &s) != 0) return false;
    const std::lock_guard<std::mutex> lock(inputs_mutex);
    return inputs_read().count({s.st_dev, s.st_ino}) != 0;
}

std::string read_input_file(const std::filesystem::path& path) {
    const std::string origin = path.string();
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error))
        throw InputError(origin, "", std::filesystem::exists(path, error) ? "not a regular file" : "no such file");
    if (pseudo_file(path)) throw InputError(origin, "", "a system pseudo-file, not a description");
    const auto size = std::filesystem::file_size(path, error);
    if (error) throw InputError(origin, "", "cannot read file size");
    if (size > kMaxJsonFileBytes)
        throw InputError(origin, "", "file is " + std::to_string(size) +
                                         " bytes; input files larger than 64 MiB are refused");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(origin, "", "cannot open file");
    if (struct stat s {}; ::stat(path.c_str(), &s) == 0) {
        const std::lock_guard<std::mutex> lock(inputs_mutex);
        inputs_read().insert({s.st_dev, s.st_ino});
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

namespace {

// Files parsed before, kept with their text: validating a set of runs reads the same chip, system,
// stack and strategy files for every record. A file whose text is what it was is not parsed again
// (reading and comparing it costs a small share of parsing); large files are not kept.
struct ParsedFile {
    std::string text;
    nlohmann::json document;
};
constexpr std::size_t kMaxCachedBytes = 256 * 1024;
constexpr std::size_t kMaxCachedFiles = 512;
std::mutex parsed_mutex;
std::map<std::string, ParsedFile>& parsed_files() {
    static std::map<std::string, ParsedFile> files;
    return files;
}

nlohmann::json parse_text(const std::string& text, const std::string& origin) {
    const auto depth_limit = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
        if (depth > kMaxJsonDepth && (event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start))
            throw InputError(origin, "", "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        return true;
    };
    try {
        return nlohmann::json::parse(text, depth_limit);
    } catch (const nlohmann::json::exception& e) {
        // parse_error for bad syntax, out_of_range for numbers beyond a double (1e400).
        throw InputError(origin, "", "malformed JSON: " + excerpt(e.what()));
    }
}

}  // namespace

nlohmann::json parse_json_file(const std::filesystem::path& path) {
    const std::string origin = path.string();
    std::string text = read_input_file(path);
    const bool cacheable = text.size() <= kMaxCachedBytes;
    if (cacheable) {
        const std::lock_guard<std::mutex> lock(parsed_mutex);
        const auto it = parsed_files().find(origin);
        if (it != parsed_files().end() && it->second.text == text) return it->second.document;
    }
    nlohmann::json document = parse_text(text, origin);
    if (cacheable) {
        const std::lock_guard<std::mutex> lock(parsed_mutex);
        if (parsed_files().size() >= kMaxCachedFiles) parsed_files().clear();
        parsed_files()[origin] = {std::move(text), document};
    }
    return document;
}

JsonObject::JsonObject(const nlohmann::json& value, std::string origin, std::string path)
    : value_(&value), origin_(std::move(origin)), path_(std::move(path)) {
    if (!value.is_object())
        throw InputError(origin_, path_, "expected a JSON object, found " + type_name(value));
}

std::string JsonObject::field_path(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
}

void JsonObject::fail(const std::string& key, const std::string& what) const {
    throw InputError(origin_, field_path(key), what);
}

bool JsonObject::has(const std::string& key) const { return value_->contains(key); }

namespace {

std::vector<std::string>& old_key_files() {
    static std::vector<std::string> files;
    return files;
}

}  // namespace

std::string format_id(const nlohmann::json& document) {
    if (!document.is_object()) return "";
    for (const char* key : {kFormatKey, kOldFormatKey}) {
        const auto it = document.find(key);
        if (it != document.end() && it->is_string()) return it->get<std::string>();
    }
    return "";
}

std::vector<std::string> files_with_old_format_key() { return old_key_files(); }

void forget_inputs() {
    {
        const std::lock_guard<std::mutex> lock(inputs_mutex);
        inputs_read().clear();
    }
    old_key_files().clear();
}

void JsonObject::require_format(const std::string& expected) {
    const bool old = !has(kFormatKey) && has(kOldFormatKey);
    if (has(kFormatKey) && has(kOldFormatKey)) fail(kOldFormatKey, std::string("give the format once, under \"") + kFormatKey + "\"");
    const std::string key = old ? kOldFormatKey : kFormatKey;
    const std::string format = string(key);
    if (format != expected) fail(key, "expected \"" + expected + "\", found \"" + format + "\"");
    auto& files = old_key_files();
    if (old && std::find(files.begin(), files.end(), origin_) == files.end()) files.push_back(origin_);
}

const nlohmann::json& JsonObject::require(const std::string& key) {
    seen_.insert(key);
    const auto it = value_->find(key);
    if (it == value_->end()) fail(key, "missing required field");
    return *it;
}

void JsonObject::allow(const std::string& key) { seen_.insert(key); }

bool JsonObject::skipped(const std::string& key, bool null_is_absent) {
    const bool absent = !has(key) || (null_is_absent && (*value_)[key].is_null());
    if (absent) allow(key);
    return absent;
}

std::vector<std::string> JsonObject::keys() const {
    std::vector<std::string> result;
    for (const auto& item : value_->items()) result.push_back(item.key());
    return result;
}

std::string JsonObject::string(const std::string& key) {
    const auto& value = require(key);
    if (!value.is_string()) fail(key, "expected a string, found " + type_name(value));
    return one_line(value.get<std::string>(), key);
}

// A name or value is one line: a newline in it would forge lines in reports and emitted files.
std::string JsonObject::one_line(std::string text, const std::string& key) const {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7f) fail(key, "a control character (code " + std::to_string(c) + ") at position " + std::to_string(i) + ": a value is one line of text");
    }
    return text;
}

std::optional<std::string> JsonObject::optional_string(const std::string& key) {
    if (skipped(key, true)) return std::nullopt;
    return string(key);
}

std::vector<std::string> JsonObject::string_list(const std::string& key) {
    const auto& value = require(key);
    if (!value.is_array()) fail(key, "expected an array of strings, found " + type_name(value));
    std::vector<std::string> result;
    for (const auto& item : value) {
        if (!item.is_string()) fail(key, "expected an array of strings, found an element of type " + type_name(item));
        result.push_back(one_line(item.get<std::string>(), key));
    }
    return result;
}

bool JsonObject::boolean(const std::string& key, bool fallback) {
    if (skipped(key, false)) return fallback;
    const auto& value = require(key);
    if (!value.is_boolean()) fail(key, "expected true or false, found " + type_name(value));
    return value.get<bool>();
}

std::int64_t JsonObject::to_int(const nlohmann::json& value, const std::string& key) const {
    if (!value.is_number()) fail(key, "expected a whole number, found " + type_name(value));
    const double number = value.get<double>();
    if (!std::isfinite(number)) fail(key, "expected a finite whole number");
    if (number != std::floor(number)) fail(key, "expected a whole number, found " + value.dump());
    if (std::fabs(number) > kMaxInteger) fail(key, "value " + value.dump() + " is out of range (at most 1e12)");
    return static_cast<std::int64_t>(number);
}

std::int64_t JsonObject::positive_int(const std::string& key) {
    const std::int64_t number = to_int(require(key), key);
    if (number < 1) fail(key, "expected a positive whole number, found " + std::to_string(number));
    return number;
}

std::optional<std::int64_t> JsonObject::optional_positive_int(const std::string& key) {
    if (skipped(key, true)) return std::nullopt;
    return positive_int(key);
}

std::int64_t JsonObject::non_negative_int(const std::string& key, std::int64_t fallback) {
    if (skipped(key, true)) return fallback;
    const std::int64_t number = to_int(require(key), key);
    if (number < 0) fail(key, "expected a whole number >= 0, found " + std::to_string(number));
    return number;
}

std::int64_t JsonObject::sourced_positive_int(const std::string& key) {
    const auto& value = require(key);
    if (value.is_object()) {
        JsonObject sourced(value, origin_, field_path(key));
        const std::int64_t number = sourced.positive_int("value");
        if (sourced.string("source").empty()) sourced.fail("source", "must say where the number comes from");
        sourced.finish();
        return number;
    }
    return positive_int(key);
}

std::vector<std::int64_t> JsonObject::positive_int_list(const std::string& key) {
    const auto& value = require(key);
    if (!value.is_array() || value.empty()) fail(key, "expected a non-empty array of positive whole numbers");
    std::vector<std::int64_t> result;
    for (const auto& item : value) {
        const std::int64_t number = to_int(item, key);
        if (number < 1) fail(key, "expected positive whole numbers, found " + std::to_string(number));
        result.push_back(number);
    }
    return result;
}

double JsonObject::positive_number(const std::string& key) {
    const auto& value = require(key);
    if (!value.is_number()) fail(key, "expected a number, found " + type_name(value));
    const double number = value.get<double>();
    if (!std::isfinite(number) || number <= 0.0) fail(key, "expected a finite number > 0, found " + value.dump());
    return number;
}

double JsonObject::non_negative_number(const std::string& key) {
    const auto& value = require(key);
    if (!value.is_number()) fail(key, "expected a number, found " + type_name(value));
    const double number = value.get<double>();
    if (!std::isfinite(number) || number < 0.0) fail(key, "expected a finite number >= 0, found " + value.dump());
    return number;
}

double JsonObject::sourced_positive_number(const std::string& key) {
    const auto& value = require(key);
    if (value.is_object()) {
        JsonObject sourced(value, origin_, field_path(key));
        const double number = sourced.positive_number("value");
        const std::string source = sourced.string("source");
        if (source.empty()) sourced.fail("source", "must say where the number comes from");
        sourced.finish();
        return number;
    }
    return positive_number(key);
}

std::optional<double> JsonObject::optional_sourced_positive_number(const std::string& key) {
    if (skipped(key, false)) return std::nullopt;
    return sourced_positive_number(key);
}

double JsonObject::sourced_in(const std::string& key, const PhysicalRange& range) {
    const double value = sourced_positive_number(key);
    if (value < range.min || value > range.max) {
        std::ostringstream what;
        what << value << " " << range.unit << " is outside the plausible range [" << range.min << ", " << range.max << "] " << range.unit;
        fail(key, what.str());
    }
    return value;
}

std::optional<double> JsonObject::optional_sourced_in(const std::string& key, const PhysicalRange& range) {
    if (skipped(key, false)) return std::nullopt;
    return sourced_in(key, range);
}

JsonObject JsonObject::object(const std::string& key) {
    return JsonObject(require(key), origin_, field_path(key));
}

std::optional<JsonObject> JsonObject::optional_object(const std::string& key) {
    if (skipped(key, true)) return std::nullopt;
    return object(key);
}

void JsonObject::finish() const {
    for (const auto& item : value_->items())
        if (!seen_.count(item.key())) fail(item.key(), "unknown field (is it misspelt?)");
}

std::pair<std::string, std::string> read_named(JsonObject& root) {
    std::pair<std::string, std::string> named{root.string("name"), root.string("description")};
    if (root.has("aliases")) (void)root.string_list("aliases");
    return named;
}

}  // namespace ridgeline::io
