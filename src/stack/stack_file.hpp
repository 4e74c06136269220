#pragma once
// Loading stacks/*.json (format ridgeline.stack/1).
#include <filesystem>
#include <string>
#include <vector>

#include "hardware/chip.hpp"
#include "io/catalog_lookup.hpp"
#include "stack/stack.hpp"

namespace ridgeline {

[[nodiscard]] Stack load_stack_file(const std::filesystem::path& path);
// InputError listing the known stacks when the name is unknown.
[[nodiscard]] Stack resolve_stack(const std::string& name_or_path, const std::filesystem::path& data_dir);
// The stack a chip runs when none is named (default_stack_name).
[[nodiscard]] Stack default_stack(const ChipSpec& chip, bool serving, const std::filesystem::path& data_dir);
[[nodiscard]] std::vector<CatalogEntry> list_stacks(const std::filesystem::path& data_dir);
// InputError naming `origin`'s stack when the stack does not run that job (vLLM does not train).
void require_job(const Stack& stack, bool serving, const std::string& origin);
// InputError naming `origin`'s moe_dispatcher or ep_overlap when the stack lacks what a plan asks.
void check_moe_dispatch(const Stack& stack, const std::string& dispatcher, bool overlap, const std::string& origin);

}  // namespace ridgeline
