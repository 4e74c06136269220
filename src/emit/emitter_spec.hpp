#pragma once
// A framework's names for a plan's settings (emitters/*.json, format ridgeline.emitter/1): for
// each setting Ridgeline writes, the framework's flag or key, or a table from Ridgeline's values
// (a recomputation policy, a dtype) to the framework's settings, each with its source, and the
// documentation version the names were checked against.
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ridgeline {

enum class EmitJob { training, serving };
// arguments: "--flag value" lines (a true switch is the bare flag, a false one is left out);
// yaml: "key: value" lines; toml: "key = value" lines under [section] headers (a key's section is
// what comes before its last '.').
enum class EmitSyntax { arguments, yaml, toml };

// A value as the framework reads it: text (quoted in YAML), a number, a switch or a list of texts.
struct EmitValue {
    enum class Kind { text, number, boolean, list };
    Kind kind = Kind::text;
    std::string text;  // numbers as written; booleans "true" or "false"; a list's items joined by ' '
};

// One of the framework's settings: its key and value.
struct EmitEntry {
    std::string key;
    EmitValue value;
};

struct EmitSetting {
    std::string key;  // the framework's flag or key; empty where the setting is a table of choices
    // Ridgeline value -> the framework's settings for it (empty list: the framework's default).
    std::map<std::string, std::vector<EmitEntry>> choices;
    // A choice key the framework reads only beside another key's value (torchtitan reads
    // selective_ac_option only with mode "selective"): elsewhere a file may give it to no effect.
    std::map<std::string, EmitEntry> read_only_with;
    std::string source;
};

struct EmitDocumentation {
    std::string version, url, notes;
};

// An earlier release's names, so that its files read (emitters/*.json "older_versions"): a file
// giving one of its old keys is read as that release's, its keys and values renamed to today's.
struct EmitOlderVersion {
    std::string version, source;
    std::map<std::string, std::string> renamed_keys;                           // old key -> today's
    std::map<std::string, std::map<std::string, std::string>> renamed_values;  // today's key -> old value -> today's
};

struct EmitterSpec {
    std::string name, description;
    std::string framework;  // as people name it ("Megatron-Core")
    EmitJob job = EmitJob::training;
    EmitSyntax syntax = EmitSyntax::arguments;
    std::vector<EmitDocumentation> checked_against;
    std::map<std::string, EmitSetting> settings;  // by Ridgeline's setting id (emit/frameworks.hpp)
    // For reading a configuration back (--from): the framework's value of a key a file leaves
    // out, and the keys that change nothing Ridgeline models (logging, paths, learning rate), each
    // with why. Any other key a file gives that no setting names is refused.
    std::map<std::string, EmitValue> read_defaults;
    std::map<std::string, std::string> ignored;
    // Keys read only at the value that changes nothing Ridgeline models (MaxText's int8_training:
    // false); another value is refused. Key -> the value and its source.
    std::map<std::string, std::pair<EmitValue, std::string>> neutral_values;
    std::vector<EmitOlderVersion> older_versions;
    // Another name the framework accepts for a value today (MaxText's remat_policy "minimal_flash"
    // for "minimal_with_context"): key -> alias -> the value it stands for.
    std::map<std::string, std::map<std::string, std::string>> value_aliases;
    std::string file;  // where it was read from, for errors
};

}  // namespace ridgeline
