// `ridgeline fit MEASUREMENTS.json -o HARDWARE.json`: measurements to a chip description.
#include <iostream>
#include <memory>

#include "calibration/fit.hpp"
#include "calibration/holdout.hpp"
#include "calibration/measurements.hpp"
#include "cli/commands.hpp"
#include "io/safe_write.hpp"
#include "hardware/catalog.hpp"
#include "report/calibration_reports.hpp"

namespace ridgeline::cli {

void add_fit_command(CLI::App& app, const GlobalOptions& /*options*/) {
    struct Flags {
        std::string measurements;
        std::string output;
        std::string name;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = app.add_subcommand(
        "fit", "fit a chip description (ridgeline.chip/1) to calibration measurements, with the fit's residuals");
    command->add_option("measurements", flags->measurements, "a ridgeline.calibration/1 file (from `ridgeline calibrate`)")->required();
    command->add_option("-o,--output", flags->output, "chip description to write")->required();
    command->add_option("--name", flags->name, "name of the chip (default: calibrated-BACKEND)");

    command->callback([flags] {
        using namespace calibration;
        const Measurements m = load_measurements(flags->measurements);
        const CalibrationFit fit = fit_measurements(m, flags->measurements);
        const std::string name = flags->name.empty() ? "calibrated-" + m.provenance.backend : flags->name;
        const ChipSpec fitted = fitted_chip(fit, m.provenance, name);
        // Read back as every other command will read it before it replaces anything.
        ChipSpec chip;
        io::write_file_atomically(flags->output, report::fitted_chip_json(fitted, fit, m.provenance, flags->measurements),
                                  [&](const std::filesystem::path& written) { chip = load_chip_file(written); });
        std::cout << "wrote " << flags->output << " (" << name << ")\n\n" << report::fit_table(chip, fit);
        if (!m.sharded.empty()) {
            const auto cases = predict_holdout(chip, m);
            std::cout << "\n" << report::holdout_table(cases, summarize(cases));
        }
    });
}

}  // namespace ridgeline::cli
