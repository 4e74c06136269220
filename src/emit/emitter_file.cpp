#include "emit/emitter_file.hpp"

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "emit/frameworks.hpp"
#include "io/catalog_lookup.hpp"
#include "io/json_reader.hpp"

namespace ridgeline {

namespace {

EmitValue read_value(io::JsonObject& object, const std::string& key) {
    const nlohmann::json& value = object.raw(key);
    if (value.is_string()) return {EmitValue::Kind::text, value.get<std::string>()};
    if (value.is_boolean()) return {EmitValue::Kind::boolean, value.get<bool>() ? "true" : "false"};
    if (value.is_number_integer()) return {EmitValue::Kind::number, std::to_string(value.get<std::int64_t>())};
    if (value.is_array()) {
        std::string items;
        for (const nlohmann::json& item : value) {
            const std::string text = item.is_string() ? item.get<std::string>() : "";
            if (text.empty() || text.find(' ') != std::string::npos) object.fail(key, "expected a list of names (texts without spaces)");
            items += (items.empty() ? "" : " ") + text;
        }
        return {EmitValue::Kind::list, items};
    }
    object.fail(key, "expected a string, a whole number, true/false or a list of names");
}

EmitSetting read_setting(io::JsonObject setting) {
    EmitSetting out;
    const bool keyed = setting.has("key"), chosen = setting.has("choices");
    if (keyed == chosen) setting.fail("key", "give either \"key\" (the framework's flag or key) or \"choices\"");
    if (keyed) {
        out.key = setting.string("key");
        if (out.key.empty()) setting.fail("key", "empty");
    } else {
        io::JsonObject choices = setting.object("choices");
        for (const std::string& value : choices.keys()) {
            io::JsonObject entries = choices.object(value);
            std::vector<EmitEntry>& list = out.choices[value];
            for (const std::string& key : entries.keys()) list.push_back({key, read_value(entries, key)});
            entries.finish();
        }
        choices.finish();
        if (auto only = setting.optional_object("read_only_with")) {
            for (const std::string& key : only->keys()) {
                io::JsonObject condition = only->object(key);
                const std::vector<std::string> keys = condition.keys();
                if (keys.size() != 1) condition.fail(key, "expected one key and the value that makes the framework read " + key);
                out.read_only_with[key] = {keys.front(), read_value(condition, keys.front())};
                condition.finish();
            }
            only->finish();
        }
    }
    out.source = setting.string("source");
    if (out.source.empty()) setting.fail("source", "empty: say where the name comes from");
    setting.finish();
    return out;
}

}  // namespace

EmitterSpec load_emitter_file(const std::filesystem::path& path) {
    io::JsonFile file(path, "ridgeline.emitter/1");
    io::JsonObject& root = file.root();
    EmitterSpec spec;
    spec.file = path.string();
    std::tie(spec.name, spec.description) = io::read_named(root);
    const EmitFramework* framework = find_emit_framework(spec.name);
    if (framework == nullptr)
        root.fail("name", "no emitter is written for \"" + spec.name + "\" (training: " + emit_framework_names(EmitJob::training) +
                              "; serving: " + emit_framework_names(EmitJob::serving) + ")");
    spec.framework = root.string("framework");
    const std::string job = root.string("job");
    if (job != "training" && job != "serving") root.fail("job", "expected \"training\" or \"serving\", found \"" + job + "\"");
    spec.job = job == "training" ? EmitJob::training : EmitJob::serving;
    if (spec.job != framework->job) root.fail("job", "the " + spec.name + " emitter writes " + (framework->job == EmitJob::training ? "training" : "serving") + " plans");
    const std::string syntax = root.string("syntax");
    if (syntax == "arguments") spec.syntax = EmitSyntax::arguments;
    else if (syntax == "yaml") spec.syntax = EmitSyntax::yaml;
    else if (syntax == "toml") spec.syntax = EmitSyntax::toml;
    else root.fail("syntax", "expected \"arguments\", \"yaml\" or \"toml\", found \"" + syntax + "\"");
    const nlohmann::json& docs = root.raw("checked_against");
    if (!docs.is_array() || docs.empty()) root.fail("checked_against", "expected a list of the documentation versions checked against");
    for (std::size_t i = 0; i < docs.size(); ++i) {
        io::JsonObject doc(docs[i], path.string(), root.field_path("checked_against") + "[" + std::to_string(i) + "]");
        EmitDocumentation d{doc.string("version"), doc.string("url"), doc.optional_string("notes").value_or("")};
        doc.finish();
        spec.checked_against.push_back(std::move(d));
    }
    io::JsonObject settings = root.object("settings");
    for (const std::string& id : settings.keys()) {
        if (std::find(framework->settings.begin(), framework->settings.end(), id) == framework->settings.end())
            settings.fail(id, "not a setting the " + spec.name + " emitter writes");
        spec.settings[id] = read_setting(settings.object(id));
    }
    for (const std::string& id : framework->settings)
        if (spec.settings.count(id) == 0) settings.fail(id, "missing: the " + spec.name + " emitter writes this setting");
    settings.finish();
    if (auto defaults = root.optional_object("read_defaults")) {
        for (const std::string& key : defaults->keys()) {
            io::JsonObject d = defaults->object(key);
            spec.read_defaults[key] = read_value(d, "value");
            if (d.string("source").empty()) d.fail("source", "empty: say where the default comes from");
            d.finish();
        }
        defaults->finish();
    }
    if (auto ignored = root.optional_object("ignored")) {
        for (const std::string& key : ignored->keys()) {
            const std::string why = ignored->string(key);
            if (why.empty()) ignored->fail(key, "empty: say why the setting changes nothing Ridgeline models");
            spec.ignored[key] = why;
        }
        ignored->finish();
    }
    if (auto neutral = root.optional_object("neutral_values")) {
        for (const std::string& key : neutral->keys()) {
            io::JsonObject n = neutral->object(key);
            spec.neutral_values[key] = {read_value(n, "value"), n.string("source")};
            if (spec.neutral_values[key].second.empty()) n.fail("source", "empty: say where the value comes from and what another would change");
            n.finish();
        }
        neutral->finish();
    }
    if (root.has("older_versions")) {
        const nlohmann::json& versions = root.raw("older_versions");
        if (!versions.is_array()) root.fail("older_versions", "expected a list of earlier releases' names");
        for (std::size_t i = 0; i < versions.size(); ++i) {
            io::JsonObject v(versions[i], path.string(), root.field_path("older_versions") + "[" + std::to_string(i) + "]");
            EmitOlderVersion older{v.string("version"), v.string("source"), {}, {}};
            if (older.source.empty()) v.fail("source", "empty: say where the release's names come from");
            io::JsonObject keys = v.object("renamed_keys");
            for (const std::string& key : keys.keys()) older.renamed_keys[key] = keys.string(key);
            keys.finish();
            if (older.renamed_keys.empty()) v.fail("renamed_keys", "empty: a release is told by a key it names differently");
            if (auto values = v.optional_object("renamed_values")) {
                for (const std::string& key : values->keys()) {
                    io::JsonObject renames = values->object(key);
                    for (const std::string& old_value : renames.keys()) older.renamed_values[key][old_value] = renames.string(old_value);
                    renames.finish();
                }
                values->finish();
            }
            v.finish();
            spec.older_versions.push_back(std::move(older));
        }
    }
    if (auto aliases = root.optional_object("value_aliases")) {
        for (const std::string& key : aliases->keys()) {
            io::JsonObject a = aliases->object(key);
            io::JsonObject values = a.object("values");
            for (const std::string& alias : values.keys()) spec.value_aliases[key][alias] = values.string(alias);
            values.finish();
            if (a.string("source").empty()) a.fail("source", "empty: say where the framework accepts the alias");
            a.finish();
        }
        aliases->finish();
    }
    root.finish();
    return spec;
}

EmitterSpec resolve_emitter(const std::string& name_or_path, const std::filesystem::path& data_dir, const std::string& flag) {
    const auto entries = io::list_catalog(data_dir / "emitters");
    if (!io::looks_like_path(name_or_path) && !io::find_entry(entries, name_or_path))
        throw InputError(flag, "", "unknown framework \"" + name_or_path + "\" (known: " + io::known_names(entries) + ")");
    return load_emitter_file(io::catalog_file(name_or_path, entries, "emit"));
}

}  // namespace ridgeline
