#include <optional>

#include <nlohmann/json.hpp>

#include "report/bound_text.hpp"
#include "report/reports.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {
std::string workload_text(const LayerWorkload& w) {
    if (w.phase == Phase::decode)
        return "decode step: " + fixed(w.sequences, 0) + " sequences at context " + fixed(w.seq_len, 0);
    return std::string(phase_name(w.phase)) + " forward: " + fixed(w.sequences, 0) + " sequences x " +
           fixed(w.seq_len, 0) + " tokens";
}
}  // namespace

namespace {

// The layer's predicted time: its ops' one after another, where every op has one.
std::optional<double> predicted_layer_s(const LayerRoofline& layer) {
    double total = 0;
    for (const PlacedOp& placed : layer.ops) {
        if (!placed.op.predicted_s) return std::nullopt;
        total += *placed.op.predicted_s;
    }
    return total;
}

}  // namespace

std::string layer_table(const Hardware& hardware, const LayerQuery& query) {
    std::string text = "One layer of " + query.model_name + " on " + hardware.chip.name + " — " +
                       workload_text(query.workload) + " (weights " + std::string(dtype_name(query.workload.weights)) +
                       ", arithmetic " + std::string(dtype_name(query.compute)) + ")\n\n";
    Table table({"op", "FLOPs", "HBM bytes", "FLOPs/byte", "roofline time", "bound", "share", "predicted"});
    for (const PlacedOp& placed : query.layer.ops) {
        const double time_s = placed.time.lower_bound_s();
        table.add_row({placed.op.name, si(placed.op.flops, "FLOP"), si(placed.op.bytes, "B"),
                       fixed(placed.time.intensity_flops_per_byte(), 1), seconds(time_s),
                       bound_name(placed.time.bound()),
                       fixed(query.layer.time_s > 0 ? 100.0 * time_s / query.layer.time_s : 0.0, 1) + "%",
                       placed.op.predicted_s ? seconds(*placed.op.predicted_s) : "-"});
    }
    const auto predicted = predicted_layer_s(query.layer);
    table.add_row({"layer", si(query.layer.flops, "FLOP"), si(query.layer.bytes, "B"),
                   fixed(query.layer.bytes > 0 ? query.layer.flops / query.layer.bytes : 0.0, 1),
                   seconds(query.layer.time_s), bound_name(query.layer.bound()), "100.0%", predicted ? seconds(*predicted) : "-"});
    const double ideal_s = query.layer.flops / hardware.chip.peak_flops(query.compute);
    return text + table.render() + "\nroofline efficiency (compute time at peak / layer time): " +
           fixed(query.layer.time_s > 0 ? 100.0 * ideal_s / query.layer.time_s : 0.0, 1) + "%\npredicted: stack " + query.stack +
           "; " + query.kernels_note + "\n";
}

std::string layer_json(const Hardware& hardware, const LayerQuery& query) {
    nlohmann::json doc;
    doc["schema"] = "ridgeline.roofline-layer/1";
    doc["hardware"] = {{"chip", hardware.chip.name},
                       {"system", hardware.system ? nlohmann::json(hardware.system->name) : nlohmann::json(nullptr)},
                       {"peak_flops_per_s", hardware.chip.peak_flops(query.compute)},
                       {"hbm_bw_Bps", hardware.chip.hbm_bw_Bps}};
    doc["model"] = query.model_name;
    doc["workload"] = {{"phase", phase_name(query.workload.phase)},
                       {"sequences", query.workload.sequences},
                       {"seq_len", query.workload.seq_len},
                       {"tokens", query.workload.tokens()},
                       {"activations_dtype", dtype_name(query.workload.activations)},
                       {"weights_dtype", dtype_name(query.workload.weights)},
                       {"kv_cache_dtype", dtype_name(query.workload.kv_cache)},
                       {"compute_dtype", dtype_name(query.compute)}};
    doc["ops"] = nlohmann::json::array();
    for (const PlacedOp& placed : query.layer.ops)
        doc["ops"].push_back({{"name", placed.op.name},
                              {"flops", placed.op.flops},
                              {"bytes", placed.op.bytes},
                              {"intensity_flops_per_byte", placed.time.intensity_flops_per_byte()},
                              {"compute_s", placed.time.compute_s},
                              {"memory_s", placed.time.memory_s},
                              {"time_s", placed.time.lower_bound_s()},
                              {"bound", bound_name(placed.time.bound())},
                              {"predicted_s", placed.op.predicted_s ? nlohmann::json(*placed.op.predicted_s) : nlohmann::json(nullptr)}});
    const auto predicted = predicted_layer_s(query.layer);
    doc["layer"] = {{"flops", query.layer.flops},
                    {"bytes", query.layer.bytes},
                    {"time_s", query.layer.time_s},
                    {"bound", bound_name(query.layer.bound())},
                    {"predicted_s", predicted ? nlohmann::json(*predicted) : nlohmann::json(nullptr)}};
    doc["stack"] = query.stack;
    doc["predicted_note"] = query.kernels_note;
    return doc.dump(2);
}

}  // namespace ridgeline::report
