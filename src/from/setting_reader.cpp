#include "from/setting_reader.hpp"

#include <cmath>

#include "core/error.hpp"
#include "io/quantity_text.hpp"
#include "model/plausible_sizes.hpp"

namespace ridgeline {

std::set<std::string> choice_keys(const EmitSetting& setting) {
    std::set<std::string> keys;
    for (const auto& [name, entries] : setting.choices)
        for (const EmitEntry& e : entries) keys.insert(e.key);
    return keys;
}

std::string SettingReader::key(const std::string& id) const {  // by value: a choice's keys are a temporary set
    const EmitSetting& setting = spec.settings.at(id);
    if (!setting.key.empty()) return setting.key;
    return *choice_keys(setting).begin();
}

void SettingReader::fail(const std::string& id, const std::string& why) const { throw InputError(file, key(id), why); }

double SettingReader::number(const std::string& id) const {
    const std::string& text = s.at(id);
    const auto [value, used] = io::leading_number(text);
    if (used != text.size() || text.empty() || !std::isfinite(value)) fail(id, "expected a number, found \"" + text + "\"");
    return value;
}

std::int64_t SettingReader::whole(const std::string& id, std::int64_t min) const {
    const double value = number(id);
    if (value != std::floor(value) || value < static_cast<double>(min) || value > 1e12)
        fail(id, "expected a whole number of at least " + std::to_string(min) + ", found \"" + s.at(id) + "\"");
    // The command line's own bounds (--seq-len, --micro-batch): a file may not go past them.
    static const std::map<std::string, double> at_most = {{"seq_len", kMaxSequenceTokens}, {"micro_batch", 1e9}};
    if (const auto it = at_most.find(id); it != at_most.end() && value > it->second)
        fail(id, s.at(id) + " is past the most Ridgeline takes (" + std::to_string(static_cast<long long>(it->second)) + ")");
    return static_cast<std::int64_t>(value);
}

std::optional<std::int64_t> SettingReader::opt(const std::string& id) const {
    return has(id) ? std::optional<std::int64_t>(whole(id)) : std::nullopt;
}

bool SettingReader::on(const std::string& id) const {
    if (!has(id)) return false;
    if (s.at(id) != "true" && s.at(id) != "false") fail(id, "expected true or false, found \"" + s.at(id) + "\"");
    return s.at(id) == "true";
}

}  // namespace ridgeline
