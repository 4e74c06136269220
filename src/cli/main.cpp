// ridgeline: roofline and scaling cost model for LLM training and inference.
// Exit codes: 0 success, 2 bad input (files, names, flags), 1 internal error.
#include <iostream>

#include "cli/app.hpp"

#ifndef RIDGELINE_DEFAULT_DATA_DIR
#define RIDGELINE_DEFAULT_DATA_DIR "."
#endif

int main(int argc, char** argv) {
    const auto app = ridgeline::cli::make_app(RIDGELINE_DEFAULT_DATA_DIR);
    const ridgeline::cli::RunOutcome outcome = ridgeline::cli::run_app(*app, std::vector<std::string>(argv + 1, argv + argc));
    if (outcome.exit_code != 0 && !outcome.error.empty())
        std::cerr << (outcome.exit_code == 2 ? "error: " : "internal error: ") << outcome.error << "\n";
    // A report that did not reach its reader (a full disk, a closed pipe) is not a success.
    if (!std::cout.flush()) {
        std::cerr << "error: the output could not be written to stdout\n";
        return outcome.exit_code != 0 ? outcome.exit_code : 1;
    }
    return outcome.exit_code;
}
