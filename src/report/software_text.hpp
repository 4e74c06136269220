#pragma once
// Where a report's kernel times come from: the stack that runs and the chip's kernel data.
#include <string>

#include "hardware/chip.hpp"
#include "stack/stack.hpp"

namespace ridgeline::report {

[[nodiscard]] inline std::string kernels_source(const ChipSpec& chip) {
    return chip.kernels ? "measured (" + chip.kernels->source + ")"
                        : "the chip's efficiency block, fitted on published runs (no measured kernels for " + chip.name + ")";
}

[[nodiscard]] inline std::string software_line(const ChipSpec& chip, const Stack& stack) {
    return "stack " + (stack.name.empty() ? std::string("(built-in defaults)") : stack.name) + ", " + stack.attention +
           " attention; kernels: " + kernels_source(chip) + "\n";
}

}  // namespace ridgeline::report
