// ridgeline: roofline and scaling cost model for LLM training and inference.
// Exit codes: 0 success, 2 bad input (files, names, flags), 1 internal error.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "io/json_reader.hpp"

#ifndef RIDGELINE_DEFAULT_DATA_DIR
#define RIDGELINE_DEFAULT_DATA_DIR "."
#endif

namespace {

// The engine names the request's field ("tp", "placement.foo"); the user typed its flag.
std::string error_line(const ridgeline::InputError& e) {
    if (e.origin() != ridgeline::kRequest) return e.what();
    const std::size_t dot = e.field().find('.');
    std::string line = "--" + e.field().substr(0, dot);
    std::replace(line.begin(), line.end(), '_', '-');
    if (dot != std::string::npos) line += ": field '" + e.field().substr(dot + 1) + "'";
    return line + ": " + e.detail();
}

}  // namespace

int main(int argc, char** argv) {
    using namespace ridgeline;
    CLI::App app{"Ridgeline: roofline and scaling cost model for LLMs on TPU and GPU clusters"};
    app.require_subcommand(1);
    cli::GlobalOptions options;
    const char* env_dir = std::getenv("RIDGELINE_DATA_DIR");
    options.data_dir = env_dir != nullptr ? env_dir : RIDGELINE_DEFAULT_DATA_DIR;
    app.add_option("--data-dir", options.data_dir, "folder holding hardware/ and models/ (env RIDGELINE_DATA_DIR)");

    cli::add_train_command(app, options);
    cli::add_validate_command(app, options);
    cli::add_serve_command(app, options);
    CLI::App* search = app.add_subcommand("search", "find the best plans: search train, search serve");
    search->require_subcommand(1);
    cli::add_search_train_command(*search, options);
    cli::add_search_serve_command(*search, options);
    cli::add_model_command(app, options);
    cli::add_roofline_command(app, options);
    cli::add_catalog_commands(app, options);
    cli::add_topology_command(app, options);
    cli::add_collective_command(app, options);
    cli::add_calibrate_command(app, options);
    cli::add_fit_command(app, options);

    try {
        app.parse(argc, argv);
        for (const std::string& file : io::files_with_old_format_key())
            std::cerr << "warning: " << file << ": names its format under \"" << io::kOldFormatKey << "\"; rename the key to \""
                      << io::kFormatKey << "\"\n";
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // One line, like every other input error; --help is one flag away.
        const bool unknown_command = argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty();
        if (unknown_command)
            std::cerr << "error: unknown command \"" << argv[1] << "\" (commands: train, serve, search, validate, model, roofline, topology, collective, calibrate, fit, hardware, models)\n";
        else
            std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const InputError& e) {
        std::cerr << "error: " << error_line(e) << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
