#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "from/launch_config.hpp"

namespace ridgeline {

namespace {

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path.string(), "", "cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

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
    LaunchEntries out{path.string(), {}};
    for (const std::string& w : words(read_text(path), out.file)) {
        if (w.rfind("--", 0) == 0) {
            const std::size_t eq = w.find('=');
            if (eq == std::string::npos) out.entries.push_back({w, {EmitValue::Kind::boolean, "true"}});
            else out.entries.push_back({w.substr(0, eq), {EmitValue::Kind::text, w.substr(eq + 1)}});
            continue;
        }
        if (out.entries.empty()) throw InputError(out.file, w, "expected a --flag (a file of Megatron-LM arguments, not a command)");
        EmitValue& v = out.entries.back().value;
        if (v.kind == EmitValue::Kind::boolean) v = {EmitValue::Kind::text, w};
        else v.text += " " + w;  // a list (--recompute-modules core_attn layernorm)
    }
    return out;
}

LaunchEntries read_yaml_file(const std::filesystem::path& path) {
    LaunchEntries out{path.string(), {}};
    YAML::Node root;
    try {
        root = YAML::Load(read_text(path));
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
        std::string value = item.second.Scalar();
        if (value == "True" || value == "TRUE") value = "true";
        if (value == "False" || value == "FALSE") value = "false";
        out.entries.push_back({key, {EmitValue::Kind::text, value}});
    }
    return out;
}

}  // namespace ridgeline
