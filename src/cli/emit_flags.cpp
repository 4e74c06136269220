#include "cli/emit_flags.hpp"

#include "core/error.hpp"
#include "emit/emitter_file.hpp"
#include "emit/frameworks.hpp"

namespace ridgeline::cli {

void add_emit_flags(CLI::App& command, EmitFlags& flags, EmitJob job, bool top) {
    command.add_option("--emit", flags.framework,
                       "print the plan as a framework's launch configuration instead of the report (" + emit_framework_names(job) +
                           "; emitters/*.json)");
    if (top)
        command.add_option("--emit-top", flags.top, "with --emit: the best K plans, one configuration each")
            ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
}

std::optional<EmitterSpec> emit_spec(const CLI::App& command, const EmitFlags& flags, bool json, const std::filesystem::path& data_dir) {
    const bool given = command.count("--emit") > 0;
    if (!given && command.get_option_no_throw("--emit-top") != nullptr && command.count("--emit-top") > 0)
        throw InputError("--emit-top", "", "needs --emit FRAMEWORK");
    if (!given) return std::nullopt;
    if (json) throw InputError("--emit", "", "prints a configuration and --json a report: give one of them");
    return resolve_emitter(flags.framework, data_dir, "--emit");
}

}  // namespace ridgeline::cli
