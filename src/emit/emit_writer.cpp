#include "emit/emit_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/version.hpp"

namespace ridgeline {

namespace {

std::string number_text(double value) {
    if (value == std::floor(value) && std::fabs(value) < 9e15) return std::to_string(static_cast<std::int64_t>(value));
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
}

std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
}

// A value in YAML or TOML (both write texts quoted, lists as [a, b] and true/false bare).
std::string typed_value(const EmitValue& value) {
    if (value.kind == EmitValue::Kind::text) return quoted(value.text);
    if (value.kind != EmitValue::Kind::list) return value.text;
    std::string items;
    std::size_t start = 0;
    while (start < value.text.size()) {
        const std::size_t end = std::min(value.text.find(' ', start), value.text.size());
        items += (items.empty() ? "" : ", ") + quoted(value.text.substr(start, end - start));
        start = end + 1;
    }
    return "[" + items + "]";
}

// TOML: the keys without a section first, then each [section] in the order first written.
std::vector<std::string> toml_lines(const std::vector<EmitEntry>& entries) {
    std::vector<std::string> sections{""};
    const auto section_of = [](const std::string& key) {
        const std::size_t dot = key.rfind('.');
        return dot == std::string::npos ? std::string() : key.substr(0, dot);
    };
    for (const EmitEntry& e : entries)
        if (std::find(sections.begin(), sections.end(), section_of(e.key)) == sections.end()) sections.push_back(section_of(e.key));
    std::vector<std::string> lines;
    for (const std::string& section : sections) {
        if (!section.empty()) lines.push_back((lines.empty() ? "[" : "\n[") + section + "]");
        for (const EmitEntry& e : entries)
            if (section_of(e.key) == section) lines.push_back(e.key.substr(section.empty() ? 0 : section.size() + 1) + " = " + typed_value(e.value));
    }
    return lines;
}

// Arguments ("--flag value", a true switch bare, a false one left out) or YAML ("key: value").
std::vector<std::string> flat_lines(const std::vector<EmitEntry>& entries, EmitSyntax syntax) {
    std::vector<std::string> lines;
    for (const EmitEntry& e : entries) {
        if (syntax == EmitSyntax::yaml) lines.push_back(e.key + ": " + typed_value(e.value));
        else if (e.value.kind != EmitValue::Kind::boolean) lines.push_back(e.key + " " + (e.value.text.empty() ? std::string("''") : e.value.text));
        else if (e.value.text == "true") lines.push_back(e.key);  // a switch left off is the framework's default
    }
    return lines;
}

}  // namespace

const EmitSetting& EmitWriter::setting(const std::string& id) const {
    const auto it = spec_.settings.find(id);
    // The loader holds every file to its framework's list of settings: a miss is a bug here.
    if (it == spec_.settings.end()) throw std::logic_error("emitter " + spec_.name + " has no setting " + id);
    return it->second;
}

void EmitWriter::add(const EmitEntry& entry) {
    for (const EmitEntry& e : entries_) {
        if (e.key != entry.key) continue;
        if (e.value.text == entry.value.text) return;
        throw InputError("--emit", "", spec_.name + ": the plan sets " + entry.key + " to both " + e.value.text + " and " + entry.value.text +
                                           " (" + spec_.file + ")");
    }
    entries_.push_back(entry);
}

void EmitWriter::set(const std::string& id, std::int64_t value) {
    add({setting(id).key, {EmitValue::Kind::number, std::to_string(value)}});
}

void EmitWriter::set_number(const std::string& id, double value) {
    add({setting(id).key, {EmitValue::Kind::number, number_text(value)}});
}

void EmitWriter::set_text(const std::string& id, const std::string& value) { add({setting(id).key, {EmitValue::Kind::text, value}}); }

void EmitWriter::set_switch(const std::string& id, bool on) {
    add({setting(id).key, {EmitValue::Kind::boolean, on ? "true" : "false"}});
}

void EmitWriter::choose(const std::string& id, const std::string& value, const std::string& knob, const EmitEntry* instead) {
    const EmitSetting& s = setting(id);
    const auto it = s.choices.find(value);
    if (it == s.choices.end()) {
        std::string known;
        for (const auto& [name, entries] : s.choices) known += (known.empty() ? "" : ", ") + name;
        refuse(knob, spec_.framework + " has no setting for " + knob + " " + value + " (" + spec_.file + " maps: " + known + ")");
    }
    for (const EmitEntry& entry : it->second) add(instead != nullptr && entry.key == instead->key ? *instead : entry);
}

void EmitWriter::refuse(const std::string& knob, const std::string& why) const { throw InputError("--emit", knob, why); }

std::string EmitWriter::render(const std::vector<std::string>& header) const {
    std::string text;
    text += "# " + spec_.framework + " configuration written by ridgeline " + ridgeline_version() + " (--emit " + spec_.name + ")\n";
    for (const std::string& line : header) text += "# " + line + "\n";
    for (const EmitDocumentation& doc : spec_.checked_against) text += "# names checked against " + doc.version + ": " + doc.url + "\n";
    for (const std::string& line : notes_) text += "# note: " + line + "\n";
    const std::vector<std::string> lines = spec_.syntax == EmitSyntax::toml ? toml_lines(entries_) : flat_lines(entries_, spec_.syntax);
    const bool continued = spec_.syntax == EmitSyntax::arguments;
    for (std::size_t i = 0; i < lines.size(); ++i) text += lines[i] + (continued && i + 1 < lines.size() ? " \\\n" : "\n");
    return text;
}

}  // namespace ridgeline
