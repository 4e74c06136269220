// `ridgeline calibrate`: measure on this hardware, and with --validate fit a chip description and
// predict held-out sharded matmuls with it.
#include <iostream>
#include <memory>

#include "calibration/backend.hpp"
#include "calibration/fit.hpp"
#include "calibration/holdout.hpp"
#include "calibration/measurements.hpp"
#include "calibration/sweep.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "hardware/catalog.hpp"
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

std::filesystem::path hardware_path_for(const std::filesystem::path& measurements) {
    std::filesystem::path path = measurements;
    path.replace_extension("");
    path += ".chip.json";
    return path;
}

}  // namespace

void add_calibrate_command(CLI::App& app, const GlobalOptions& /*options*/) {
    struct Flags {
        std::string backend = "cpu";
        int devices = 1;
        double time_budget_s = 60;
        bool quiet = false;
        std::string output = "calibration.json";
        bool validate = false;
        bool json = false;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = app.add_subcommand(
        "calibrate", "time GEMMs, copies and collectives on this hardware (ridgeline.calibration/1); --validate fits and checks held-out cases");
    command->add_option("--backend", flags->backend, "cpu (threads), mpi (one rank per device, under mpirun) or cuda");
    command->add_option("--devices", flags->devices, "devices: threads (cpu), ranks (mpi) or GPUs (cuda)")->check(CLI::Range(1, 4096));
    command->add_option("--time-budget", flags->time_budget_s, "seconds to spend measuring: passes over all steps repeat while it lasts, each sample keeping its "
                      "fastest (steps the first pass cannot reach are skipped)")
        ->check(CLI::Range(1.0, 86400.0));
    command->add_flag("--quiet", flags->quiet, "no progress on stderr");
    command->add_option("-o,--output", flags->output, "measurements file to write (rewritten after every step)");
    command->add_flag("--validate", flags->validate,
                      "fit a chip description, then predict held-out sharded matmuls and MLP blocks and report the error");
    command->add_flag("--json", flags->json, "with --validate: print one JSON document (schema ridgeline.calibration-validation/1)");

    command->callback([flags] {
        using namespace calibration;
        const Flags& f = *flags;
        BackendRequest request;
        request.name = f.backend;
        request.devices = f.devices;
        request.arguments_fingerprint = f.backend + "|" + std::to_string(f.devices) + "|" + std::to_string(f.time_budget_s) +
                                        "|" + f.output + "|" + (f.validate ? "v" : "") + (f.json ? "j" : "");
        const bool small = kAlwaysSmall || f.time_budget_s < 20;
        // Per pass: the sweep's passes multiply it (more repetitions filter out a busy host).
        request.repeat_target_s = small ? 0.01 : 0.04;
        Provenance provenance = host_provenance();
        request.evict_bytes = provenance.cache_bytes;  // each device: the whole last-level cache
        std::unique_ptr<Backend> backend = make_backend(request);
        const bool talk = backend->leader() && !f.quiet;

        provenance.backend = backend->name();
        provenance.devices = backend->devices();
        provenance.libraries = backend->libraries();
        const SweepPlan plan = make_plan(backend->devices(), f.validate, small);
        const std::filesystem::path output = f.output;
        const auto progress = [&](const StepReport& step) {
            if (talk)
                std::cerr << "[" << step.index << "/" << step.count << "] " << step.what << " (" << report::fixed(step.left_s, 1)
                          << " s left)\n";
        };
        const auto save = [&](const Measurements& m) {
            if (backend->leader()) write_file_atomically(output, measurements_json(m));
        };
        const SweepOutcome outcome = run_sweep(*backend, plan, provenance, f.time_budget_s, progress, save);
        if (!backend->leader()) return;
        const Measurements& m = outcome.measurements;
        save(m);
        if (talk && outcome.skipped > 0)
            std::cerr << "time budget reached: " << outcome.skipped << " steps skipped\n";
        const std::string wrote = "wrote " + output.string() + " (" + std::to_string(m.gemms.size()) + " GEMMs, " +
                                  std::to_string(m.copies.size()) + " copies, " + std::to_string(m.collectives.size()) +
                                  " collectives, " + std::to_string(m.sharded.size()) + " held-out cases; fastest of " +
                                  std::to_string(outcome.passes) + (outcome.passes == 1 ? " pass)" : " passes)");
        if (!f.validate) {
            if (!f.quiet) std::cout << wrote << "\n";
            return;
        }
        // Fit on the fitting steps only, write the description, and read it back as any command would.
        const CalibrationFit fit = fit_measurements(m, output.string());
        const std::filesystem::path hardware_path = hardware_path_for(output);
        const ChipSpec fitted = fitted_chip(fit, provenance, "calibrated-" + provenance.backend);
        write_file_atomically(hardware_path, report::fitted_chip_json(fitted, fit, provenance, output.string()));
        const ChipSpec chip = load_chip_file(hardware_path);
        const auto cases = predict_holdout(chip, m);
        const HoldoutSummary summary = summarize(cases);
        if (summary.count == 0)
            throw InputError("--time-budget", "", "no held-out case was measured within the budget; give more time");
        if (!f.quiet)
            for (const auto& c : cases)
                for (const auto& warning : c.warnings) std::cerr << "warning: " << c.name << ": " << warning << "\n";
        if (f.json) {
            std::cout << report::holdout_json(cases, summary, output.string(), hardware_path.string());
        } else {
            std::cout << wrote << "\nwrote " << hardware_path.string() << " (fitted chip description)\n\n"
                      << report::fit_table(chip, fit) << "\n"
                      << report::holdout_table(cases, summary);
        }
    });
}

}  // namespace ridgeline::cli
