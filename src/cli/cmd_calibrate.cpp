// `ridgeline calibrate`: measure on this hardware, and with --validate fit a chip description and
// predict held-out sharded matmuls with it.
#include <iostream>
#include <memory>

#include "app/calibrate.hpp"
#include "cli/commands.hpp"
#include "report/calibration_reports.hpp"
#include "report/table.hpp"

namespace ridgeline::cli {

namespace {

// Sanitizer builds run everything several times slower: they always take the small sweep.
#ifdef RIDGELINE_SMALL_CALIBRATION
constexpr bool kAlwaysSmall = true;
#else
constexpr bool kAlwaysSmall = false;
#endif

}  // namespace

void add_calibrate_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        app::CalibrateRequest request;  // the flags fill it in place
        bool quiet = false;
        bool json = false;
    };
    auto flags = std::make_shared<Flags>();
    app::CalibrateRequest& r = flags->request;
    CLI::App* command = app.add_subcommand(
        "calibrate", "time GEMMs, copies and collectives on this hardware (ridgeline.calibration/1); --validate fits and checks held-out cases");
    command->add_option("--backend", r.backend, "cpu (threads), mpi (one rank per device, under mpirun) or cuda");
    command->add_option("--devices", r.devices, "devices: threads (cpu), ranks (mpi) or GPUs (cuda)")->check(CLI::Range(1, 4096));
    command->add_option("--time-budget", r.time_budget_s, "seconds to spend measuring: passes over all steps repeat while it lasts, each sample keeping its "
                      "fastest (steps the first pass cannot reach are skipped)")
        ->check(CLI::Range(1.0, 86400.0));
    command->add_flag("--quiet", flags->quiet, "no progress on stderr");
    command->add_option("-o,--output", r.output, "measurements file to write when done (progress goes to OUTPUT.partial)");
    command->add_flag("--force", r.force, "replace an existing output file (and its fitted .chip.json)");
    command->add_flag("--validate", r.validate,
                      "fit a chip description, then predict held-out sharded matmuls and MLP blocks and report the error");
    command->add_option("--like", r.like, "with --validate on a GPU: the chip it is (its datasheet peaks, memory and "
                                          "interconnect; the measured kernel model replaces its own)");
    command->add_flag("--json", flags->json, "with --validate: print one JSON document (schema ridgeline.calibration-validation/1)");

    command->callback([flags, &options] {
        const Flags& f = *flags;
        app::CalibrateRequest request = f.request;
        const std::string output = request.output.string();
        request.data_dir = options.data_dir;
        request.small = kAlwaysSmall || request.time_budget_s < 20;
        request.arguments_fingerprint = request.backend + "|" + std::to_string(request.devices) + "|" + std::to_string(request.time_budget_s) +
                                        "|" + output + "|" + (request.validate ? "v" : "") + (f.json ? "j" : "") + "|" + request.like;
        const auto progress = [&](const calibration::StepReport& step) {
            if (!f.quiet)
                std::cerr << "[" << step.index << "/" << step.count << "] " << step.what << " (" << report::fixed(step.left_s, 1)
                          << " s left)\n";
        };
        const app::CalibrateOutcome outcome = app::calibrate(request, progress);
        if (!outcome.leader) return;
        const calibration::Measurements& m = outcome.measurements;
        if (!f.quiet && outcome.skipped > 0) std::cerr << "time budget reached: " << outcome.skipped << " steps skipped\n";
        const std::string wrote = "wrote " + output + " (" + std::to_string(m.gemms.size() + m.kernels.gemms.size()) + " GEMMs, " +
                                  std::to_string(m.copies.size()) + " copies, " + std::to_string(m.collectives.size()) +
                                  " collectives, " + std::to_string(m.sharded.size()) + " held-out cases; fastest of " +
                                  std::to_string(outcome.passes) + (outcome.passes == 1 ? " pass)" : " passes)");
        if (!outcome.validation) {
            if (!f.quiet) std::cout << wrote << "\n";
            return;
        }
        const app::CalibrationValidation& v = *outcome.validation;
        if (!f.quiet)
            for (const auto& c : v.cases)
                for (const auto& warning : c.warnings) std::cerr << "warning: " << c.name << ": " << warning << "\n";
        if (f.json) {
            std::cout << report::holdout_json(v.cases, v.summary, output, v.chip_path.string());
        } else {
            std::cout << wrote << "\nwrote " << v.chip_path.string() << " (fitted chip description)\n\n"
                      << (v.fit ? report::fit_table(v.chip, *v.fit) : report::kernel_fit_table(*v.kernels)) << "\n"
                      << report::holdout_table(v.cases, v.summary);
        }
    });
}

}  // namespace ridgeline::cli
