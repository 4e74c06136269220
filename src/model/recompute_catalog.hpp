#pragma once
// Loading recomputation policies: recompute/*.json by name, or a path to one.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/recompute_policy.hpp"

namespace ridgeline {

[[nodiscard]] RecomputePolicy load_recompute_policy(const std::filesystem::path& path);
// A catalog name or alias, a "megatron-core: ..." module list, or a path; an unknown name is an InputError naming `origin` and
// `field` (a file and its field, or the request's "recompute") and listing the known ones.
[[nodiscard]] RecomputePolicy resolve_recompute(const std::string& name_or_path, const std::filesystem::path& data_dir,
                                                const std::string& origin, const std::string& field);
// Megatron-Core's recompute_modules names (transformer_config.py) as this project's modules: core_attn,
// layernorm, moe_act, mla_up_proj, and mlp / moe / shared_experts (the MLP's up-projection and
// activation again; the down-projection's output is the layer's, kept anyway). Unknown: nullopt.
[[nodiscard]] std::optional<RecomputeModules> megatron_recompute_module(const std::string& name);
// A selective recomputation of Megatron-Core's modules, named "megatron-core: core_attn mlp"; an
// unknown or missing module is an InputError naming `origin` and `field`.
inline constexpr const char* kMegatronPolicyPrefix = "megatron-core:";
[[nodiscard]] RecomputePolicy megatron_recompute_policy(const std::vector<std::string>& modules, const std::string& origin, const std::string& field);
// Every shipped policy, or those whose files ask to be searched by default.
[[nodiscard]] std::vector<RecomputePolicy> recompute_policies(const std::filesystem::path& data_dir, bool searched_only);

}  // namespace ridgeline
