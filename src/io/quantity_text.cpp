#include "io/quantity_text.hpp"

#include <cctype>
#include <cmath>
#include <utility>

#include "core/error.hpp"

namespace ridgeline::io {

double parse_bytes(const std::string& text, const std::string& flag) {
    static const std::pair<const char*, double> units[] = {
        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
        {"kB", 1e3},     {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},  {"TB", 1e12}, {"B", 1.0}, {"", 1.0}};
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    std::string suffix = used > 0 ? text.substr(used) : "";
    while (!suffix.empty() && std::isspace(static_cast<unsigned char>(suffix.front()))) suffix.erase(0, 1);
    if (used > 0 && std::isfinite(value) && value > 0)
        for (const auto& [unit, scale] : units)
            if (suffix == unit) return value * scale;
    throw InputError(flag, "", "expected a positive size such as 1GiB, 512MB or 4e9, found \"" + text + "\"");
}

}  // namespace ridgeline::io
