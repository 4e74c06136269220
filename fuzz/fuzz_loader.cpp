// libFuzzer target for one description loader (chosen at compile time by RIDGELINE_FUZZ_LOADER):
// any input must either load or be refused with an InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "calibration/kernel_measurements.hpp"
#include "calibration/measurements.hpp"
#include "core/error.hpp"
#include "emit/emitter_file.hpp"
#include "from/launch_config.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "scenario/scenario_file.hpp"
#include "sharding/strategy_file.hpp"
#include "io/trace_file.hpp"
#include "stack/engine_file.hpp"
#include "stack/stack_file.hpp"
#include "topology/graph_routing.hpp"
#include "topology/topology_file.hpp"
#include "accuracy/residuals_file.hpp"
#include "validation/run_record.hpp"

namespace {

const std::filesystem::path& input_path() {
    static const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("ridgeline-fuzz-" + std::to_string(::getpid()) + ".json");
    return path;
}

void load(const std::filesystem::path& path) {
    const std::filesystem::path data_dir = RIDGELINE_SOURCE_DIR;
    const std::string loader = RIDGELINE_FUZZ_LOADER;
    if (loader == "chip") (void)ridgeline::load_chip_file(path);
    else if (loader == "system") (void)ridgeline::load_system_file(path);
    else if (loader == "model") (void)ridgeline::load_model_file(path);
    else if (loader == "hf_config") (void)ridgeline::load_hf_config(path);
    else if (loader == "strategy") (void)ridgeline::load_strategy_file(path);
    else if (loader == "stack") (void)ridgeline::load_stack_file(path);
    else if (loader == "topology") {
        // Routing is deferred to the first collective: run it here so the time budget covers it.
        for (const auto& dim : ridgeline::load_topology_file(path, data_dir).cluster.dims)
            if (dim.routing) (void)dim.routing->loads();
    }
    else if (loader == "scenario") (void)ridgeline::load_scenario_file(path, data_dir);
    else if (loader == "run_records") (void)ridgeline::load_run_records(path, data_dir);
    else if (loader == "calibration") (void)ridgeline::calibration::load_measurements(path);
    else if (loader == "kernel_measurements") (void)ridgeline::calibration::load_kernel_measurements(path);
    else if (loader == "emitter") (void)ridgeline::load_emitter_file(path);
    else if (loader == "residuals") (void)ridgeline::load_residuals(path);
    else if (loader == "launch_script") (void)ridgeline::read_arguments_file(path);
    else if (loader == "engine") (void)ridgeline::load_engine_file(path);
    else if (loader == "trace") {
        ridgeline::io::TraceFile trace(path, 131072);
        while (trace.next()) {
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    {
        std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        load(input_path());
    } catch (const ridgeline::InputError&) {
        // Refused with a message naming the field: the expected answer to bad input.
    }
    return 0;
}
