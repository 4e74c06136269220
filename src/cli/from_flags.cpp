#include "cli/from_flags.hpp"

#include <iostream>

namespace ridgeline::cli {

void add_from_flags(CLI::App& command, FromFlags& flags, const std::string& what) {
    command.add_option("--from", flags.from, "FRAMEWORK FILE: " + what +
                                                 " (megatron: Megatron-LM arguments or a launch script; maxtext: a YAML override or recipe "
                                                 "script; torchtitan: a TOML job file); flags given as well override it")
        ->expected(2);
    command.add_flag("--strict", flags.strict, "with --from: refuse the file's settings that change nothing Ridgeline models, instead of listing them on stderr")
        ->needs("--from");
}

LaunchConfig read_from_flags(const FromFlags& flags, const std::filesystem::path& data_dir, const ModelSpec& model, std::int64_t chips) {
    LaunchConfig config = read_launch_config(flags.from[0], flags.from[1], data_dir, model, chips);
    if (const std::string note = ignored_keys_note(config, flags.strict); !note.empty()) std::cerr << "note: " << note << "\n";
    return config;
}

}  // namespace ridgeline::cli
