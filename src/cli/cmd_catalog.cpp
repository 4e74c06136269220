#include <iostream>

#include "cli/commands.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "report/reports.hpp"

namespace ridgeline::cli {

void add_catalog_commands(CLI::App& app, const GlobalOptions& options) {
    auto hardware_json = std::make_shared<bool>(false);
    CLI::App* hardware = app.add_subcommand("hardware", "list the systems and chips Ridgeline knows");
    hardware->add_flag("--json", *hardware_json, "print one JSON document (schema ridgeline.hardware-list/1)");
    hardware->callback([hardware_json, &options] {
        const std::vector<report::CatalogGroup> groups = {{"systems", list_systems(options.data_dir)},
                                                          {"chips", list_chips(options.data_dir)}};
        std::cout << (*hardware_json ? report::catalog_json("ridgeline.hardware-list/1", groups) + "\n"
                                     : report::catalog_table(groups));
    });

    auto models_json = std::make_shared<bool>(false);
    CLI::App* models = app.add_subcommand("models", "list the models Ridgeline ships");
    models->add_flag("--json", *models_json, "print one JSON document (schema ridgeline.model-list/1)");
    models->callback([models_json, &options] {
        const std::vector<report::CatalogGroup> groups = {{"models", list_models(options.data_dir)}};
        std::cout << (*models_json ? report::catalog_json("ridgeline.model-list/1", groups) + "\n"
                                   : report::catalog_table(groups));
    });
}

}  // namespace ridgeline::cli
