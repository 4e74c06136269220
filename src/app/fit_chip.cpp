#include "app/fit_chip.hpp"

#include <fstream>

#include "calibration/kernel_measurements.hpp"
#include "calibration/measurements.hpp"
#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "io/catalog_lookup.hpp"
#include "io/json_reader.hpp"
#include "io/safe_write.hpp"
#include "report/calibration_reports.hpp"

namespace ridgeline::app {

namespace {

std::string format_of(const std::filesystem::path& path) { return io::format_id(io::parse_json_file(path)); }

}  // namespace

std::filesystem::path datasheet_file(const std::string& like, const std::filesystem::path& data_dir) {
    if (io::looks_like_path(like)) return like;
    const auto entry = io::find_entry(list_chips(data_dir), like);
    if (!entry) throw InputError(kRequest, "like", "unknown chip \"" + like + "\"; known: " + io::known_names(list_chips(data_dir)));
    return entry->file;
}

namespace {

// The chip file as written, in its own key order (it loaded as a chip already).
nlohmann::ordered_json ordered_document(const std::filesystem::path& path) {
    std::ifstream in(path);
    return nlohmann::ordered_json::parse(in);
}

void check_system(const std::string& system, const std::filesystem::path& data_dir) {
    if (system.empty()) return;
    if (!io::find_entry(list_systems(data_dir), system))
        throw InputError(kRequest, "system", "unknown system \"" + system + "\"; known: " + io::known_names(list_systems(data_dir)));
}

// Writes `text`, read back as a chip before it replaces anything (an error names OUTPUT, not the
// temporary file), then resolved as --hardware OUTPUT is, with its system.
Hardware write_chip(const std::filesystem::path& output, const std::string& text, const std::filesystem::path& data_dir) {
    io::write_file_atomically(output, text, [&](const std::filesystem::path& written) {
        try {
            (void)load_chip_file(written);
        } catch (const InputError& e) {
            throw InputError(output.string(), e.field(), e.detail() + " (not written)");
        }
    });
    return resolve_hardware(output.string(), data_dir);
}

}  // namespace

FitOutcome fit_chip(const FitRequest& request, const std::filesystem::path& data_dir) {
    using namespace calibration;
    check_system(request.system, data_dir);
    const std::string origin = request.measurements.string();
    const std::string format = format_of(request.measurements);
    const bool kernel_file = format == kKernelMeasurementsFormat;
    if (!kernel_file && format != kCalibrationFormat)
        throw InputError(origin, io::kFormatKey, std::string("expected \"") + kCalibrationFormat + "\" or \"" + kKernelMeasurementsFormat +
                                               "\", found \"" + format + "\"");
    std::optional<Measurements> calibration;
    if (!kernel_file) calibration = load_measurements(request.measurements);
    FitOutcome out;

    if (request.like.empty()) {
        if (kernel_file)
            throw InputError(kRequest, "like", "kernel measurements are fractions of a datasheet peak: name the chip they ran on");
        if (!calibration->kernels.empty())
            throw InputError(kRequest, "like", origin + " holds tensor-core GEMMs (" + calibration->provenance.device +
                                                   "): name the chip whose datasheet they complete");
        out.calibration = fit_measurements(*calibration, origin);
        const std::string name = request.name.empty() ? "calibrated-" + calibration->provenance.backend : request.name;
        const ChipSpec fitted = fitted_chip(*out.calibration, calibration->provenance, name);
        out.hardware = write_chip(request.output,
                                  report::fitted_chip_json(fitted, *out.calibration, calibration->provenance, origin, request.system),
                                  data_dir);
    } else {
        const std::filesystem::path like_file = datasheet_file(request.like, data_dir);
        const ChipSpec like = load_chip_file(like_file);
        const KernelMeasurements measured = kernel_file ? load_kernel_measurements(request.measurements)
                                                        : kernel_measurements_of(*calibration);
        if (measured.gemms.empty() && !like.kernels)
            throw InputError(origin, "gemm", "no GEMMs measured, and " + like.name + " has no kernel model to complete them");
        out.kernels = fit_kernels(measured, like, origin);
        report::MeasuredChip what;
        what.name = request.name.empty() ? like.name + "-measured" : request.name;
        what.system = request.system;
        what.origin = origin;
        what.measured = measured;
        if (calibration && !calibration->provenance.device.empty()) what.device_memory_bytes = calibration->provenance.memory_bytes;
        out.hardware = write_chip(request.output,
                                  report::measured_chip_json(ordered_document(like_file), *out.kernels, what), data_dir);
    }
    if (calibration && !calibration->sharded.empty()) {
        out.holdout = predict_holdout(out.hardware.chip, *calibration);
        out.summary = summarize(out.holdout);
    }
    return out;
}

}  // namespace ridgeline::app
