#include <algorithm>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "from/launch_config.hpp"
#include "from/shell_script.hpp"
#include "io/json_reader.hpp"

namespace ridgeline {

namespace {

std::string read_text(const std::filesystem::path& path) { return io::read_input_file(path); }

// Shell-like words: whitespace separates, '...' and "..." quote, '#' at a word's start comments
// out the rest of the line, a '\' ending a line continues it.
std::vector<std::string> words(const std::string& text, const std::string& file) {
    std::vector<std::string> out;
    std::string word;
    bool in_word = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (ch == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
            ++i;
            if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            continue;
        }
        if (ch == '#' && !in_word) {
            while (i < text.size() && text[i] != '\n') ++i;
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
            if (in_word) out.push_back(word);
            word.clear();
            in_word = false;
            continue;
        }
        in_word = true;
        if (ch == '\'' || ch == '"') {
            const std::size_t close = text.find(ch, i + 1);
            if (close == std::string::npos) throw InputError(file, "", "a quote (" + std::string(1, ch) + ") is not closed");
            word += text.substr(i + 1, close - i - 1);
            i = close;
            continue;
        }
        word += ch;
    }
    if (in_word) out.push_back(word);
    return out;
}

}  // namespace

LaunchEntries read_arguments_file(const std::filesystem::path& path) {
    LaunchEntries out{path.string(), {}, {}, 0};
    const std::string text = read_text(path);
    std::vector<ShellWord> args;
    if (looks_like_shell_script(text)) {
        const LaunchCommand command = read_launch_command(text, out.file);
        args = command.args;
        out.processes = command.processes;
    } else {
        for (std::string& w : words(text, out.file)) args.push_back({std::move(w), std::nullopt});
    }
    for (const ShellWord& w : args) {
        // A flag given under a condition the script cannot be read to decide is kept, its value
        // unknown: an error only where Ridgeline reads that flag.
        if (w.text.rfind("--", 0) == 0) {
            const std::size_t eq = w.text.find('=');
            const std::string key = w.text.substr(0, eq);
            // argparse keeps a repeated flag's last value
            std::erase_if(out.entries, [&](const EmitEntry& e) { return e.key == key; });
            out.unknown.erase(key);
            if (w.unknown) out.unknown.emplace(key, *w.unknown);
            if (eq == std::string::npos) out.entries.push_back({key, {EmitValue::Kind::boolean, "true"}});
            else out.entries.push_back({key, {EmitValue::Kind::text, w.text.substr(eq + 1)}});
            continue;
        }
        if (out.entries.empty())
            throw InputError(out.file, w.text, w.unknown ? "the script's arguments are not all known statically: " + *w.unknown
                                                          : "expected a --flag (a file of Megatron-LM arguments, or a launch script)");
        EmitEntry& e = out.entries.back();
        if (w.unknown) out.unknown.emplace(e.key, *w.unknown);
        if (e.value.kind == EmitValue::Kind::boolean) e.value = {EmitValue::Kind::text, w.text};
        else e.value.text += " " + w.text;  // a list (--recompute-modules core_attn layernorm)
    }
    return out;
}

namespace {

// MaxText's pyconfig parses a switch with string_to_bool, as YAML spells it either way.
std::string lower_switch(std::string value) {
    if (value == "True" || value == "TRUE") return "true";
    if (value == "False" || value == "FALSE") return "false";
    return value;
}

// A MaxText recipe script (MaxText/configs/v5e/16b.sh): its `python3 MaxText/train.py CONFIG
// key=value ...` line, read statically. pyconfig loads CONFIG, then sets each key=value over it
// (MaxText/pyconfig.py _load_kwargs splits each argument at '='); the defaults Ridgeline reads are
// base.yml's, so the script must start from base.yml.
LaunchEntries read_maxtext_script(const std::string& text, const std::string& file) {
    LaunchEntries out{file, {}, {}, 0};
    const LaunchCommand command = read_launch_command(text, file);
    if (command.args.empty() || command.args.front().text.find('=') != std::string::npos)
        throw InputError(file, "line " + std::to_string(command.line), "expected " + command.script + " CONFIG.yml key=value ... (MaxText's pyconfig reads its configuration file first)");
    const ShellWord& config = command.args.front();
    // Only the file's name matters (Ridgeline reads base.yml's defaults): its folder may be the environment's.
    if (config.unknown && !config.text.substr(config.known_from).ends_with("/base.yml"))
        throw InputError(file, "line " + std::to_string(command.line), "the configuration file is not known statically: " + *config.unknown);
    if (std::filesystem::path(config.text).filename() != "base.yml")
        throw InputError(file, config.text, "the script starts from this configuration, not MaxText's base.yml, whose defaults Ridgeline reads: give that file to --from with the script's overrides in it");
    for (std::size_t k = 1; k < command.args.size(); ++k) {
        const ShellWord& w = command.args[k];
        const std::size_t eq = w.text.find('=');
        if (eq == std::string::npos || eq == 0)
            throw InputError(file, w.text, "expected key=value (line " + std::to_string(command.line) + "): MaxText reads its command line as overrides of " + config.text);
        const std::string key = w.text.substr(0, eq);
        if (w.unknown) out.unknown.emplace(key, *w.unknown);
        out.entries.push_back({key, {EmitValue::Kind::text, lower_switch(w.text.substr(eq + 1))}});
    }
    return out;
}

}  // namespace

LaunchEntries read_yaml_file(const std::filesystem::path& path) {
    LaunchEntries out{path.string(), {}, {}, 0};
    if (path.extension() == ".sh") return read_maxtext_script(read_text(path), out.file);
    YAML::Node root;
    try {
        // Every document: a second one would otherwise be dropped unread.
        const std::vector<YAML::Node> documents = YAML::LoadAll(read_text(path));
        if (documents.size() > 1)
            throw InputError(out.file, "", "holds " + std::to_string(documents.size()) + " YAML documents (---): a MaxText override is one");
        if (!documents.empty()) root = documents.front();
    } catch (const YAML::Exception& e) {
        throw InputError(out.file, "", std::string("not valid YAML: ") + e.what());
    }
    if (root.IsNull()) return out;
    if (!root.IsMap()) throw InputError(out.file, "", "expected a YAML mapping of keys to values");
    for (const auto& item : root) {
        if (!item.first.IsScalar()) throw InputError(out.file, "", "expected text keys");
        const std::string key = item.first.Scalar();
        if (item.second.IsNull()) {
            out.entries.push_back({key, {EmitValue::Kind::text, ""}});
            continue;
        }
        if (!item.second.IsScalar()) throw InputError(out.file, key, "expected one value (a number, text or true/false)");
        out.entries.push_back({key, {EmitValue::Kind::text, lower_switch(item.second.Scalar())}});
    }
    return out;
}

namespace {

// A TOML value as text: strings as they are, numbers and booleans as written, an array of them
// as its items joined by ' ' (a list).
std::optional<EmitValue> toml_value(const toml::node& node) {
    if (const auto* text = node.as_string()) return EmitValue{EmitValue::Kind::text, text->get()};
    if (const auto* whole = node.as_integer()) return EmitValue{EmitValue::Kind::number, std::to_string(whole->get())};
    if (const auto* flag = node.as_boolean()) return EmitValue{EmitValue::Kind::boolean, flag->get() ? "true" : "false"};
    if (const auto* number = node.as_floating_point()) {
        std::ostringstream out;
        out << number->get();
        return EmitValue{EmitValue::Kind::number, out.str()};
    }
    if (const auto* array = node.as_array()) {
        std::string items;
        for (const toml::node& item : *array) {
            const auto value = toml_value(item);
            if (!value || value->kind == EmitValue::Kind::list) return std::nullopt;
            items += (items.empty() ? "" : " ") + value->text;
        }
        return EmitValue{EmitValue::Kind::list, items};
    }
    return std::nullopt;
}

// Tables flattened to dotted keys ([parallelism] tensor_parallel_degree -> parallelism.tensor_parallel_degree).
void flatten(const toml::table& table, const std::string& prefix, LaunchEntries& out) {
    for (const auto& [name, node] : table) {
        const std::string key = prefix + std::string(name.str());
        if (const auto* inner = node.as_table()) {
            flatten(*inner, key + ".", out);
            continue;
        }
        const auto value = toml_value(node);
        if (!value) throw InputError(out.file, key, "expected a text, a number, true/false or a list of them");
        out.entries.push_back({key, *value});
    }
}

}  // namespace

namespace {

// toml++ recurses once per level of a dotted key or table header, so 50,000 levels overflow the
// stack: deeper than this is refused before parsing (torchtitan's keys are two levels deep). Quoted
// keys with dots count too: a stricter check, never a looser one.
constexpr std::size_t kMaxTomlKeyDepth = 32;

void check_key_depth(const std::string& text, const std::string& file) {
    std::size_t line = 1;
    for (std::size_t start = 0; start < text.size(); ++line) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view row(text.data() + start, end - start);
        const std::string_view key = row.substr(0, row.find('='));
        if (static_cast<std::size_t>(std::count(key.begin(), key.end(), '.')) >= kMaxTomlKeyDepth)
            throw InputError(file, "line " + std::to_string(line), "a key nested more than " + std::to_string(kMaxTomlKeyDepth) + " tables deep");
        start = end + 1;
    }
}

}  // namespace

LaunchEntries read_toml_file(const std::filesystem::path& path) {
    LaunchEntries out{path.string(), {}, {}, 0};
    const std::string text = read_text(path);
    check_key_depth(text, out.file);
    toml::table root;
    try {
        root = toml::parse(text, path.string());
    } catch (const toml::parse_error& e) {
        const auto& at = e.source().begin;
        throw InputError(out.file, "", "not valid TOML (line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + "): " +
                                           std::string(e.description()));
    }
    flatten(root, "", out);
    return out;
}

}  // namespace ridgeline
