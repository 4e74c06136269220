#include "cli/app.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cli/numeric_flags.hpp"
#include "core/clip.hpp"
#include "core/error.hpp"
#include "io/json_reader.hpp"

namespace ridgeline::cli {

namespace {

// The engine names the request's field ("tp", "placement.foo"); the user typed its flag.
std::string error_line(const InputError& e) {
    if (e.origin() != kRequest) return e.what();
    const std::size_t dot = e.field().find('.');
    std::string line = "--" + e.field().substr(0, dot);
    std::replace(line.begin(), line.end(), '_', '-');
    if (dot != std::string::npos) line += ": field '" + e.field().substr(dot + 1) + "'";
    return line + ": " + e.detail();
}

}  // namespace

std::unique_ptr<App> make_app(const std::string& default_data_dir) {
    auto app = std::make_unique<App>();
    CLI::App& root = app->root;
    GlobalOptions& options = app->options;
    root.require_subcommand(1);
    const char* env_dir = std::getenv("RIDGELINE_DATA_DIR");
    options.data_dir = env_dir != nullptr ? env_dir : default_data_dir;
    root.add_option("--data-dir", options.data_dir, "folder holding hardware/ and models/ (env RIDGELINE_DATA_DIR)");
    add_train_command(root, options);
    add_validate_command(root, options);
    add_serve_command(root, options);
    CLI::App* search = root.add_subcommand("search", "find the best plans: search train, search serve");
    search->require_subcommand(1);
    add_search_train_command(*search, options);
    add_search_serve_command(*search, options);
    add_model_command(root, options);
    add_roofline_command(root, options);
    add_catalog_commands(root, options);
    add_topology_command(root, options);
    add_collective_command(root, options);
    add_calibrate_command(root, options);
    add_fit_command(root, options);
    check_numeric_flags(root);
    return app;
}

RunOutcome run_app(App& app, const std::vector<std::string>& args) {
    CLI::App& root = app.root;
    io::forget_inputs();
    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
        root.parse(reversed);
        for (const std::string& file : io::files_with_old_format_key())
            std::cerr << "warning: " << file << ": names its format under \"" << io::kOldFormatKey << "\"; rename the key to \""
                      << io::kFormatKey << "\"\n";
    } catch (const CLI::CallForHelp& e) {
        return {root.exit(e), ""};
    } catch (const CLI::CallForAllHelp& e) {
        return {root.exit(e), ""};
    } catch (const CLI::ParseError& e) {
        // One line, like every other input error; --help is one flag away.
        const bool unknown_command = !args.empty() && args.front()[0] != '-' && root.get_subcommands().empty();
        if (unknown_command)
            return {2, clip_error_line("unknown command \"" + args.front() +
                                       "\" (commands: train, serve, search, validate, model, roofline, topology, collective, calibrate, fit, hardware, models)")};
        return {2, clip_error_line(e.what())};
    } catch (const InputError& e) {
        return {2, clip_error_line(error_line(e))};
    } catch (const std::exception& e) {
        return {1, clip_error_line(e.what())};
    }
    return {0, ""};
}

}  // namespace ridgeline::cli
