#include "model/recompute_catalog.hpp"

#include <array>
#include <iterator>
#include <sstream>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "io/catalog_lookup.hpp"
#include "io/json_reader.hpp"

namespace ridgeline {

namespace {

constexpr const char* kPolicyFormat = "ridgeline.recompute-policy/1";

constexpr std::array<std::pair<const char*, RecomputeModule>, kRecomputeModuleCount> kModules = {{
    {"core_attention", RecomputeModule::core_attention},
    {"attention_output", RecomputeModule::attention_output},
    {"norms", RecomputeModule::norms},
    {"activation", RecomputeModule::activation},
    {"mlp_up", RecomputeModule::mlp_up},
    {"mla_up_projection", RecomputeModule::mla_up_projection},
    {"attention_projection", RecomputeModule::attention_projection},
    {"layer", RecomputeModule::layer},
}};

constexpr unsigned bit(RecomputeModule module) { return static_cast<unsigned>(module); }

constexpr std::array<std::pair<const char*, RecomputeModules>, 7> kMegatronModules = {{
    {"core_attn", bit(RecomputeModule::core_attention)},
    {"layernorm", bit(RecomputeModule::norms)},
    {"moe_act", bit(RecomputeModule::activation)},
    {"mla_up_proj", bit(RecomputeModule::mla_up_projection)},
    {"mlp", bit(RecomputeModule::mlp_up) | bit(RecomputeModule::activation)},
    {"moe", bit(RecomputeModule::mlp_up) | bit(RecomputeModule::activation)},
    {"shared_experts", bit(RecomputeModule::mlp_up) | bit(RecomputeModule::activation)},
}};

std::string module_names() {
    std::string text;
    for (const auto& [name, module] : kModules) text += (text.empty() ? "" : ", ") + std::string(name);
    return text;
}

struct LoadedPolicy {
    RecomputePolicy policy;
    bool searched = false;
};

LoadedPolicy load(const std::filesystem::path& path) {
    io::JsonFile file(path, kPolicyFormat);
    io::JsonObject& root = file.root();
    LoadedPolicy loaded;
    loaded.policy.name = io::read_named(root).first;
    (void)root.string("source");
    std::size_t index = 0;
    for (const std::string& name : root.string_list("recompute")) {
        bool known = false;
        for (const auto& [known_name, module] : kModules)
            if (name == known_name) {
                loaded.policy.modules |= static_cast<unsigned>(module);
                known = true;
            }
        if (!known)
            root.fail("recompute[" + std::to_string(index) + "]", "unknown module \"" + name + "\"; known: " + module_names());
        ++index;
    }
    loaded.policy.offload = root.boolean("offload", false);
    loaded.searched = root.boolean("search", false);
    root.finish();
    return loaded;
}

}  // namespace

std::optional<RecomputeModules> megatron_recompute_module(const std::string& name) {
    for (const auto& [known, modules] : kMegatronModules)
        if (name == known) return modules;
    return std::nullopt;
}

RecomputePolicy megatron_recompute_policy(const std::vector<std::string>& modules, const std::string& origin, const std::string& field) {
    if (modules.empty()) throw InputError(origin, field, "names no Megatron-Core module to recompute");
    RecomputePolicy policy{kMegatronPolicyPrefix, 0};
    for (const std::string& name : modules) {
        const auto found = megatron_recompute_module(name);
        if (!found) {
            std::string known;
            for (const auto& [megatron_name, unused] : kMegatronModules) known += (known.empty() ? "" : ", ") + std::string(megatron_name);
            throw InputError(origin, field, "unknown Megatron-Core module \"" + name + "\"; known: " + known);
        }
        policy.name += " " + name;
        policy.modules |= *found;
    }
    return policy;
}

RecomputePolicy load_recompute_policy(const std::filesystem::path& path) { return load(path).policy; }

RecomputePolicy resolve_recompute(const std::string& name_or_path, const std::filesystem::path& data_dir, const std::string& origin,
                                  const std::string& field) {
    if (name_or_path.starts_with(kMegatronPolicyPrefix)) {
        std::istringstream words(name_or_path.substr(std::string_view(kMegatronPolicyPrefix).size()));
        std::vector<std::string> modules{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
        return megatron_recompute_policy(modules, origin, field);
    }
    if (io::looks_like_path(name_or_path)) return load_recompute_policy(name_or_path);
    const auto entries = io::list_catalog(data_dir / "recompute");
    if (const auto entry = io::find_entry(entries, name_or_path)) return load_recompute_policy(entry->file);
    throw InputError(origin, field, "unknown recomputation policy \"" + name_or_path + "\"; known: " + io::known_names(entries) +
                                          " (or give a path to a policy file)");
}

std::vector<RecomputePolicy> recompute_policies(const std::filesystem::path& data_dir, bool searched_only) {
    std::vector<RecomputePolicy> policies;
    for (const CatalogEntry& entry : io::list_catalog(data_dir / "recompute")) {
        LoadedPolicy loaded = load(entry.file);
        if (!searched_only || loaded.searched) policies.push_back(std::move(loaded.policy));
    }
    return policies;
}

}  // namespace ridgeline
