// `ridgeline fit MEASUREMENTS.json -o HARDWARE.json [--like CHIP] [--system SYSTEM]`: measurements
// to a chip description.
#include <iostream>
#include <memory>

#include "app/fit_chip.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "report/calibration_reports.hpp"

namespace ridgeline::cli {

void add_fit_command(CLI::App& app, const GlobalOptions& options) {
    auto request = std::make_shared<app::FitRequest>();
    CLI::App* command = app.add_subcommand(
        "fit", "fit a chip description (ridgeline.chip/1) to measurements, with the fit's residuals: a calibration file "
               "(every figure fitted), or kernel measurements with --like (a shipped chip given a measured kernel model)");
    command->add_option("measurements", request->measurements,
                        "a ridgeline.calibration/1 file (from `ridgeline calibrate`) or a ridgeline.kernel-measurements/1 file")
        ->required();
    command->add_option("-o,--output", request->output, "chip description to write")->required();
    command->add_option("--name", request->name, "name of the chip (default: calibrated-BACKEND, or CHIP-measured with --like)");
    command->add_option("--like", request->like,
                        "the chip the kernels ran on (name or file): its datasheet peaks, memory bandwidth, interconnect and "
                        "system, with the measured kernel model in place of its own");
    command->add_option("--system", request->system, "the system the chip is placed in, so that train and serve can build a cluster "
                                                     "(default: --like's; none for a calibration fitted whole)");

    command->callback([request, &options] {
        std::error_code same_error;
        if (std::filesystem::equivalent(request->measurements, request->output, same_error))
            throw InputError("-o", "", request->output.string() + " is the measurements file itself: write the chip elsewhere");
        const app::FitOutcome out = app::fit_chip(*request, options.data_dir);
        std::cout << "wrote " << request->output.string() << " (" << out.hardware.chip.name
                  << (out.hardware.system ? ", in " + out.hardware.system->name : std::string(", no system")) << ")\n\n";
        if (out.calibration) std::cout << report::fit_table(out.hardware.chip, *out.calibration);
        if (out.kernels) std::cout << report::kernel_fit_table(*out.kernels);
        if (!out.holdout.empty()) std::cout << "\n" << report::holdout_table(out.holdout, out.summary);
    });
}

}  // namespace ridgeline::cli
