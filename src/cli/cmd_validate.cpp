#include <iostream>

#include "cli/commands.hpp"
#include "report/reports.hpp"
#include "validation/validate.hpp"

namespace ridgeline::cli {

void add_validate_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        std::string file;
        bool json = false;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* c = app.add_subcommand("validate", "predict published runs (run-record files) and compare with what they measured");
    c->add_option("file", f->file, "a ridgeline.run-record/1 file")->required();
    c->add_flag("--json", f->json, "print one JSON document (schema ridgeline.validation/1)");
    c->callback([f, &options] {
        const ValidationResult result = validate_records(load_run_records(f->file), options.data_dir);
        std::cout << (f->json ? report::validation_json(result) + "\n" : report::validation_table(result));
    });
}

}  // namespace ridgeline::cli
