// ridgeline._core: the command-line commands run in-process for the Python package
// (python/ridgeline/__init__.py). A call runs exactly what the executable runs, on a fresh
// command tree, and returns what it printed: the package parses the --json document.
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "cli/app.hpp"
#include "cli/interrupt.hpp"

#ifndef RIDGELINE_DEFAULT_DATA_DIR
#define RIDGELINE_DEFAULT_DATA_DIR "."
#endif

namespace py = pybind11;
using ridgeline::cli::App;

namespace {

// Commands print to std::cout, which a call borrows: one call at a time.
std::mutex& run_mutex() {
    static std::mutex mutex;
    return mutex;
}

CLI::App* find_command(App& app, const std::vector<std::string>& path) {
    CLI::App* command = &app.root;
    for (const std::string& name : path) command = command->get_subcommand(name);
    return command;
}

struct Captured {
    int exit_code = 0;
    std::string out, error;
};

Captured run(const std::vector<std::string>& args) {
    const std::lock_guard<std::mutex> lock(run_mutex());
    const auto app = ridgeline::cli::make_app(RIDGELINE_DEFAULT_DATA_DIR);
    std::ostringstream out;
    std::streambuf* const saved = std::cout.rdbuf(out.rdbuf());
    ridgeline::cli::RunOutcome outcome;
    try {
        outcome = ridgeline::cli::run_app(*app, args);
    } catch (...) {
        std::cout.rdbuf(saved);
        throw;
    }
    std::cout.rdbuf(saved);
    return {outcome.exit_code, out.str(), outcome.error};
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "Ridgeline's commands, run in-process (use the ridgeline package)";
    // Long commands poll this between units of work: Python's signal handlers run (on the main
    // thread, where the call runs), and a pending KeyboardInterrupt stops the command.
    ridgeline::cli::set_interrupt_check([] {
        const py::gil_scoped_acquire acquire;
        return PyErr_CheckSignals() != 0;
    });
    m.def(
        "run",
        [](const std::vector<std::string>& args) {
            Captured captured;
            {
                const py::gil_scoped_release release;  // long searches leave Python free
                captured = run(args);
            }
            // Ctrl-C during the call: the command stopped at its next progress report (the check
            // below ran Python's handler, which left KeyboardInterrupt set); raise it here.
            if (PyErr_Occurred() != nullptr) throw py::error_already_set();
            return py::make_tuple(captured.exit_code, py::bytes(captured.out), captured.error);
        },
        "run(args) -> (exit code, what the command printed, the error line)");
    m.def(
        "options",
        [](const std::vector<std::string>& path) {
            const auto app = ridgeline::cli::make_app(RIDGELINE_DEFAULT_DATA_DIR);
            py::list out;
            for (const CLI::Option* option : find_command(*app, path)->get_options()) {
                const std::string name = option->get_single_name();
                if (name == "help") continue;
                const char* kind = option->get_positional()          ? "positional"
                                   : option->get_expected_max() == 0 ? "flag"
                                   : option->get_expected_min() == 0 ? "switch"
                                                                     : "option";
                const bool repeats = option->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
                out.append(py::make_tuple(name, kind, option->get_expected_max(), repeats));
            }
            return out;
        },
        "options(command path) -> [(name, kind, most values a use, whether it may be given again)]");
    m.def(
        "help", [](const std::vector<std::string>& path) { return find_command(*ridgeline::cli::make_app(RIDGELINE_DEFAULT_DATA_DIR), path)->help(); },
        "help(command path) -> the command's --help text");
}
