#include <nlohmann/json.hpp>

#include "report/bound_text.hpp"
#include "report/reports.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {
std::string hardware_title(const Hardware& hardware) {
    std::string title = hardware.chip.name;
    if (hardware.system) title += " in " + hardware.system->name;
    return title;
}

nlohmann::json hardware_json(const Hardware& hardware) {
    nlohmann::json doc = {{"chip", hardware.chip.name}};
    doc["system"] = hardware.system ? nlohmann::json(hardware.system->name) : nlohmann::json(nullptr);
    return doc;
}
}  // namespace

std::string ridge_table(const Hardware& hardware, const std::vector<RidgePoint>& points) {
    std::string text = "Ridge points of " + hardware_title(hardware) +
                       ": work below the critical intensity is bound by that level's bandwidth\n\n";
    Table table({"dtype", "level", "bandwidth", "peak", "critical FLOPs/byte", "meaning"});
    for (const RidgePoint& point : points)
        table.add_row({std::string(dtype_name(point.dtype)), point.level, si(point.bandwidth_Bps, "B/s"),
                       si(hardware.chip.peak_flops(point.dtype), "FLOP/s"), fixed(point.intensity_flops_per_byte, 1),
                       point.bandwidth_meaning});
    return text + table.render();
}

std::string ridge_json(const Hardware& hardware, const std::vector<RidgePoint>& points) {
    nlohmann::json doc;
    doc["schema"] = "ridgeline.roofline/1";
    doc["hardware"] = hardware_json(hardware);
    doc["ridge_points"] = nlohmann::json::array();
    for (const RidgePoint& point : points)
        doc["ridge_points"].push_back({{"dtype", dtype_name(point.dtype)},
                                       {"level", point.level},
                                       {"meaning", point.bandwidth_meaning},
                                       {"bandwidth_Bps", point.bandwidth_Bps},
                                       {"peak_flops_per_s", hardware.chip.peak_flops(point.dtype)},
                                       {"critical_intensity_flops_per_byte", point.intensity_flops_per_byte}});
    return doc.dump(2);
}

std::string matmul_table(const Hardware& hardware, const MatmulQuery& query) {
    const RooflineTime& t = query.time;
    std::string text = "Matmul [" + fixed(query.shape.rows, 0) + ", " + fixed(query.shape.contract, 0) + "] x [" +
                       fixed(query.shape.contract, 0) + ", " + fixed(query.shape.cols, 0) + "] on " +
                       hardware_title(hardware) + " (activations " + std::string(dtype_name(query.dtypes.activations)) +
                       ", weights " + std::string(dtype_name(query.dtypes.weights)) + ", arithmetic " +
                       std::string(dtype_name(query.dtypes.compute)) + ")\n\n";
    Table table({"quantity", "value"});
    table.add_row({"FLOPs", si(t.flops, "FLOP")});
    table.add_row({"HBM bytes", si(t.bytes, "B")});
    table.add_row({"intensity", fixed(t.intensity_flops_per_byte(), 2) + " FLOPs/byte"});
    table.add_row({"compute time", seconds(t.compute_s)});
    table.add_row({"memory time", seconds(t.memory_s)});
    table.add_row({"lower bound (max)", seconds(t.lower_bound_s())});
    table.add_row({"upper bound (sum)", seconds(t.upper_bound_s())});
    table.add_row({"bound", std::string(bound_name(t.bound()))});
    table.add_row({"critical batch (B << D, F)", fixed(query.critical_batch_tokens, 1) + " tokens"});
    table.add_row({"predicted (measured kernels)", query.predicted ? seconds(query.predicted->lower_bound_s()) : "-"});
    return text + table.render() + "\n" + (query.predicted ? "kernel model: " : "no prediction: ") + query.predicted_note;
}

std::string matmul_json(const Hardware& hardware, const MatmulQuery& query) {
    const RooflineTime& t = query.time;
    nlohmann::json doc;
    doc["schema"] = "ridgeline.roofline-matmul/1";
    doc["hardware"] = hardware_json(hardware);
    doc["shape"] = {{"B", query.shape.rows}, {"D", query.shape.contract}, {"F", query.shape.cols}};
    doc["dtypes"] = {{"activations", dtype_name(query.dtypes.activations)},
                     {"weights", dtype_name(query.dtypes.weights)},
                     {"compute", dtype_name(query.dtypes.compute)}};
    doc["flops"] = t.flops;
    doc["bytes"] = t.bytes;
    doc["intensity_flops_per_byte"] = t.intensity_flops_per_byte();
    doc["compute_s"] = t.compute_s;
    doc["memory_s"] = t.memory_s;
    doc["lower_bound_s"] = t.lower_bound_s();
    doc["upper_bound_s"] = t.upper_bound_s();
    doc["bound"] = bound_name(t.bound());
    doc["critical_batch_tokens"] = query.critical_batch_tokens;
    doc["predicted_s"] = query.predicted ? nlohmann::json(query.predicted->lower_bound_s()) : nlohmann::json(nullptr);
    // The kernel model's parts: its time is the fixed cost plus the larger of compute and traffic.
    doc["predicted_parts"] = query.predicted ? nlohmann::json{{"compute_s", query.predicted->compute_s},
                                                              {"memory_s", query.predicted->memory_s},
                                                              {"overhead_s", query.predicted->overhead_s}}
                                             : nlohmann::json(nullptr);
    doc["predicted_note"] = query.predicted_note;
    return doc.dump(2);
}

}  // namespace ridgeline::report
