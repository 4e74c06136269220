#pragma once
// Where a report's kernel times come from: the stack that runs and the chip's kernel data.
#include <cstdio>
#include <string>

#include "engine/roofline.hpp"
#include "hardware/chip.hpp"
#include "stack/stack.hpp"

namespace ridgeline::report {

[[nodiscard]] inline std::string kernels_source(const ChipSpec& chip) {
    return chip.kernels ? chip.kernels->source
                        : "the chip's efficiency block, fitted on published runs (no kernel model for " + chip.name + ")";
}

// The attention kernel that runs, and why when it is not the stack's first choice.
[[nodiscard]] inline std::string attention_text(const ChipSpec& chip, const Stack& stack) {
    const std::string& family = attention_family(chip, stack.attention);
    if (family == stack.attention.front()) return family;
    return family + " (" + stack.attention.front() + " has no measurements on " + chip.name + ")";
}

// Whose runs a fitted parameter comes from: the stack's, or, where they cannot show it, wider ones.
[[nodiscard]] inline std::string parameter_origin(const Stack& stack, const std::string& name) {
    const auto borrowed = stack.fitted_borrowed.find(name);
    const std::string& from = borrowed != stack.fitted_borrowed.end() ? borrowed->second : stack.fitted_from;
    if (from == "family") return "its family's runs (" + stack.family + ")";
    if (from == "pooled") return "all stacks' runs, pooled";
    return "its runs";
}

// A fitted share below 1, or gathers that block compute, change every sharded plan's step: the reader is told.
[[nodiscard]] inline std::string sharded_comm_text(const Stack& stack) {
    std::string text;
    if (stack.sharded_comm_blocks) text += "; each of its ZeRO-3 / FSDP gathers waits for the whole device, so none runs under compute";
    if (stack.sharded_copies_per_rank) text += "; its sharded collectives copy one piece per rank";
    if (stack.fitted.sharded_comm_efficiency >= 1.0) return text;
    char share[32];
    std::snprintf(share, sizeof share, "%.3g%%", 100.0 * stack.fitted.sharded_comm_efficiency);
    return text + "; its ZeRO-3 / FSDP gathers and reduce-scatters at " + std::string(share) + " of the modelled rate (fitted on " +
           parameter_origin(stack, "sharded_comm_efficiency") + ")";
}

// Where the stack's overheads come from: its own runs, or, with too few, a pooled fit of others'; and
// what its own runs could not show, taken from wider fits.
[[nodiscard]] inline std::string stack_parameters_text(const Stack& stack) {
    if (stack.fitted_from == "family") return "its family's pooled fit (" + stack.family + "): too few published runs of its own";
    if (stack.fitted_from == "pooled") return "the pooled fit of all stacks: too few published runs of it or its family";
    std::string text = "fitted on its own published runs";
    for (const auto& [name, from] : stack.fitted_borrowed)
        if (name != "sharded_comm_efficiency") text += "; " + name + " from " + parameter_origin(stack, name) + ", which its own cannot show";
    return text;
}

// Whether every overhead (the sharded share is told apart) is fitted on the stack's own runs.
[[nodiscard]] inline bool own_overheads(const Stack& stack) {
    if (stack.fitted_from != "own") return false;
    for (const auto& [name, from] : stack.fitted_borrowed)
        if (name != "sharded_comm_efficiency") return false;
    return true;
}

[[nodiscard]] inline std::string software_line(const ChipSpec& chip, const Stack& stack) {
    return "stack " + (stack.name.empty() ? std::string("(built-in defaults)") : stack.name) + ", " + attention_text(chip, stack) +
           " attention" + sharded_comm_text(stack) + (own_overheads(stack) ? "" : "; overheads: " + stack_parameters_text(stack)) +
           "; kernels: " + kernels_source(chip) + "\n";
}

}  // namespace ridgeline::report
