#include "app/calibrate.hpp"

#include <memory>
#include <optional>

#include "app/fit_chip.hpp"
#include "calibration/backend.hpp"
#include "calibration/measurements.hpp"
#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "io/safe_write.hpp"
#include "report/calibration_reports.hpp"

namespace ridgeline::app {

std::filesystem::path fitted_chip_path(const std::filesystem::path& measurements) {
    std::filesystem::path path = measurements;
    path.replace_extension("");
    path += ".chip.json";
    return path;
}

CalibrateOutcome calibrate(const CalibrateRequest& request, const std::function<void(const calibration::StepReport&)>& progress) {
    using namespace calibration;
    if (!request.force)
        for (const std::filesystem::path& path : {request.output, request.validate ? fitted_chip_path(request.output) : std::filesystem::path()})
            if (!path.empty() && std::filesystem::exists(path))
                throw InputError(kRequest, "output", path.string() + " exists; give --force to replace it (or another --output)");
    BackendRequest backend_request;
    backend_request.name = request.backend;
    backend_request.devices = request.devices;
    backend_request.arguments_fingerprint = request.arguments_fingerprint;
    // Per pass: the sweep's passes multiply it (more repetitions filter out a busy host).
    backend_request.repeat_target_s = request.small ? 0.01 : 0.04;
    Provenance provenance = host_provenance();
    backend_request.evict_bytes = provenance.cache_bytes;  // each device: the whole last-level cache
    std::unique_ptr<Backend> backend = make_backend(backend_request);
    const bool gpu = !backend->tensor_dtypes().empty();
    std::optional<ChipSpec> datasheet;  // a GPU's validation fits its kernel model into this chip's datasheet
    if (request.validate && gpu) {
        if (request.like.empty())
            throw InputError(kRequest, "like", "a GPU's kernel model is fitted into a datasheet: name the chip this is (e.g. h100-sxm)");
        datasheet = load_chip_file(datasheet_file(request.like, request.data_dir));
    }
    provenance.backend = backend->name();
    provenance.devices = backend->devices();
    provenance.libraries = backend->libraries();
    backend->describe(provenance);

    CalibrateOutcome out;
    out.leader = backend->leader();
    // Progress goes to OUT.partial; OUT is written once, complete, at the end.
    std::filesystem::path partial = request.output;
    partial += ".partial";
    const auto save = [&](const Measurements& m) {
        if (out.leader) io::write_file_atomically(partial, measurements_json(m));
    };
    const auto report_progress = [&](const StepReport& step) {
        if (out.leader && progress) progress(step);
    };
    SweepOutcome sweep = run_sweep(*backend, make_plan(backend->devices(), request.validate && !gpu, request.small, backend->tensor_dtypes()), provenance,
                                   request.time_budget_s, report_progress, save);
    if (!out.leader) return out;
    io::write_file_atomically(request.output, measurements_json(sweep.measurements),
                              [](const std::filesystem::path& written) { (void)load_measurements(written); });
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    out.measurements = std::move(sweep.measurements);
    out.passes = sweep.passes;
    out.skipped = sweep.skipped;
    if (!request.validate) return out;

    // Fit on the fitting steps only, write the description, and read it back as any command would.
    CalibrationValidation v;
    v.chip_path = fitted_chip_path(request.output);
    if (gpu) {
        FitOutcome fitted = fit_chip({request.output, v.chip_path, "", request.like, ""}, request.data_dir);
        v.chip = fitted.hardware.chip;
        v.kernels = std::move(fitted.kernels);
        v.cases = predict_held_out_gemms(kernel_measurements_of(out.measurements), *datasheet, request.output.string());
    } else {
        v.fit = fit_measurements(out.measurements, request.output.string());
        const ChipSpec fitted = fitted_chip(*v.fit, provenance, "calibrated-" + provenance.backend);
        io::write_file_atomically(v.chip_path, report::fitted_chip_json(fitted, *v.fit, provenance, request.output.string()),
                                  [&](const std::filesystem::path& written) { v.chip = load_chip_file(written); });
        v.cases = predict_holdout(v.chip, out.measurements);
    }
    v.summary = summarize(v.cases);
    if (v.summary.count == 0)
        throw InputError(kRequest, "time_budget", "no held-out case was measured within the budget; give more time");
    out.validation = std::move(v);
    return out;
}

}  // namespace ridgeline::app
