#pragma once
// Loading model descriptions: the project's models/*.json, a path to one, or a Hugging Face
// config.json. The I/O edge of the model side; transformer_math never sees a file.
#include <filesystem>
#include <string>
#include <vector>

#include "io/catalog_lookup.hpp"
#include "model/model_spec.hpp"

namespace ridgeline {

[[nodiscard]] ModelSpec load_model_file(const std::filesystem::path& path);
// A Hugging Face config.json (llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3).
[[nodiscard]] ModelSpec load_hf_config(const std::filesystem::path& path);
// A catalog name or alias, or a path to either kind of file (told apart by their content).
[[nodiscard]] ModelSpec resolve_model(const std::string& name_or_path, const std::filesystem::path& data_dir);
[[nodiscard]] std::vector<CatalogEntry> list_models(const std::filesystem::path& data_dir);

}  // namespace ridgeline
