#include "cli/switches.hpp"

#include "core/error.hpp"

namespace ridgeline::cli {

CLI::Option* add_switch(CLI::App& command, const std::string& name, std::string& text, const std::string& help) {
    return command.add_option(name, text, help + " (alone or \"on\"; \"off\")")->expected(0, 1)->type_name("[on|off]");
}

std::optional<bool> switch_value(const CLI::App& command, const std::string& name, const std::string& text) {
    if (command.count(name) == 0) return std::nullopt;
    if (text.empty() || text == "on") return true;
    if (text == "off") return false;
    throw InputError(name, "", "expected on or off, found \"" + text + "\"");
}

}  // namespace ridgeline::cli
