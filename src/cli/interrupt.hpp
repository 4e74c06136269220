#pragma once
// A host that runs commands in-process (the Python module) can stop a long one: searches and
// validations poll the host's check between units of work and, when it says so, unwind with
// Interrupted. The executable sets no check (a signal ends the process).
#include <functional>
#include <stdexcept>

namespace ridgeline::cli {

struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("interrupted") {}
};

// `check` returns true when the host wants the command stopped; an empty one never does.
void set_interrupt_check(std::function<bool()> check);
// Throws Interrupted when the host's check says so.
void stop_if_interrupted();

}  // namespace ridgeline::cli
