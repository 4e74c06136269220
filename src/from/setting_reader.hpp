#pragma once
// The settings a launch configuration gave, by Ridgeline's setting id (match_settings), read as
// numbers, whole numbers or switches; a malformed value is an InputError naming the file and the
// framework's key.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "emit/emitter_spec.hpp"

namespace ridgeline {

// The framework's keys a choice setting reads.
[[nodiscard]] std::set<std::string> choice_keys(const EmitSetting& setting);

struct SettingReader {
    const EmitterSpec& spec;
    const std::map<std::string, std::string>& s;
    std::string file;

    [[nodiscard]] std::string key(const std::string& id) const;  // the framework's key (a choice's first)
    [[noreturn]] void fail(const std::string& id, const std::string& why) const;
    [[nodiscard]] bool has(const std::string& id) const { return s.count(id) != 0; }
    [[nodiscard]] double number(const std::string& id) const;
    [[nodiscard]] std::int64_t whole(const std::string& id, std::int64_t min = 1) const;
    [[nodiscard]] std::optional<std::int64_t> opt(const std::string& id) const;
    [[nodiscard]] bool on(const std::string& id) const;  // false when not given
};

}  // namespace ridgeline
