#pragma once
// On/off knobs, spelled the same in `train` and `search train`: "--sp" or "--sp on" turns one on,
// "--sp off" turns it off; left out, the scenario's value stands (train) or both are tried (search).
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace ridgeline::cli {

CLI::Option* add_switch(CLI::App& command, const std::string& name, std::string& text, const std::string& help);

// nullopt when the switch was not given; InputError naming it for anything but on or off.
[[nodiscard]] std::optional<bool> switch_value(const CLI::App& command, const std::string& name, const std::string& text);

}  // namespace ridgeline::cli
