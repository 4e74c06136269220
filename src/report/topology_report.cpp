#include <nlohmann/json.hpp>

#include "report/reports.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {
const char* kind_name(DimKind kind) {
    switch (kind) {
        case DimKind::ring: return "torus axis";
        case DimKind::switched: return "switch";
        case DimKind::fabric: return "fabric";
        case DimKind::graph: return "graph";
    }
    return "torus axis";
}

std::string dims_text(const Cluster& cluster) {
    std::string text;
    for (const auto& dim : cluster.dims) {
        if (!text.empty()) text += " x ";
        text += dim.name + "=" + std::to_string(dim.extent);
    }
    return text;
}
}  // namespace

std::string topology_table(const TopologySummary& s) {
    const Cluster& c = s.cluster;
    std::string text = "Topology " + c.name + " (" + c.chip_name + "): " + std::to_string(c.chips()) + " chips, " +
                       dims_text(c) + "\n\n";
    Table dims({"dimension", "kind", "level", "members", "wraps", "bandwidth per chip (one way)", "hop latency"});
    for (const auto& dim : c.dims)
        dims.add_row({dim.name, kind_name(dim.kind), std::to_string(dim.level), std::to_string(dim.extent),
                      dim.kind == DimKind::ring ? (dim.wraps ? "yes" : "no") : "", si(dim.bw_per_chip_Bps_one_way, "B/s"),
                      seconds(dim.hop_latency_s)});
    text += dims.render() + "\n";
    if (!s.graph_built) {
        text += "graph analyses skipped above 4096 chips";
        if (s.closed_form_diameter) text += "; closed-form diameter " + std::to_string(*s.closed_form_diameter) + " hops";
        return text + "\n";
    }
    Table figures({"figure", "graph", "closed form"});
    figures.add_row({"switch vertices", std::to_string(s.switches), ""});
    figures.add_row({"links", std::to_string(s.links), ""});
    figures.add_row({"connected", s.connected ? "yes" : "no", ""});
    figures.add_row({"diameter (hops)", std::to_string(s.hops.diameter),
                     s.closed_form_diameter ? std::to_string(*s.closed_form_diameter) : ""});
    figures.add_row({"mean hops", fixed(s.hops.mean_hops, 3), ""});
    for (const auto& b : s.bisections)
        figures.add_row({"bisection across " + b.dim, si(b.graph_Bps, "B/s"), b.closed_form_Bps ? si(*b.closed_form_Bps, "B/s") : ""});
    if (s.all_to_all_link_load)
        figures.add_row({"all-to-all busiest link (messages)", fixed(*s.all_to_all_link_load, 2),
                         s.closed_form_all_to_all_link_load ? fixed(*s.closed_form_all_to_all_link_load, 2) : ""});
    return text + figures.render();
}

std::string topology_json(const TopologySummary& s) {
    nlohmann::json doc;
    doc["schema"] = "ridgeline.topology-report/1";
    doc["name"] = s.cluster.name;
    doc["chip"] = s.cluster.chip_name;
    doc["chips"] = s.cluster.chips();
    doc["dims"] = nlohmann::json::array();
    for (const auto& dim : s.cluster.dims)
        doc["dims"].push_back({{"name", dim.name},
                               {"kind", kind_name(dim.kind)},
                               {"level", dim.level},
                               {"extent", dim.extent},
                               {"wraps", dim.wraps},
                               {"bw_per_chip_Bps_one_way", dim.bw_per_chip_Bps_one_way},
                               {"hop_latency_s", dim.hop_latency_s}});
    doc["graph_built"] = s.graph_built;
    if (s.closed_form_diameter) doc["closed_form_diameter_hops"] = *s.closed_form_diameter;
    if (s.graph_built) {
        doc["switches"] = s.switches;
        doc["links"] = s.links;
        doc["connected"] = s.connected;
        doc["diameter_hops"] = s.hops.diameter;
        doc["mean_hops"] = s.hops.mean_hops;
        doc["bisection"] = nlohmann::json::array();
        for (const auto& b : s.bisections) {
            nlohmann::json entry = {{"dim", b.dim}, {"graph_Bps", b.graph_Bps}};
            if (b.closed_form_Bps) entry["closed_form_Bps"] = *b.closed_form_Bps;
            doc["bisection"].push_back(entry);
        }
        if (s.all_to_all_link_load) doc["all_to_all_max_link_load"] = *s.all_to_all_link_load;
    }
    return doc.dump(2);
}

std::string collective_table(const Cluster& cluster, const CollectiveQuery& q) {
    const CollectiveCost& c = q.cost;
    std::string axes;
    for (const auto& axis : q.axes) axes += (axes.empty() ? "" : ",") + axis;
    std::string text = std::string(collective_name(c.kind)) + " of " + si(c.bytes, "B") + " over " + axes + " (" +
                       std::to_string(c.group_size) + " chips) on " + cluster.name + " [" + dims_text(cluster) + "]\n\n";
    Table levels({"level", "bandwidth term", "latency term"});
    for (const auto& level : c.levels) levels.add_row({level.name, seconds(level.bandwidth_s), seconds(level.latency_s)});
    text += levels.render() + "\n";
    Table total({"quantity", "value"});
    total.add_row({"fixed overhead", seconds(c.overhead_s)});
    total.add_row({"latency term", seconds(c.latency_s)});
    total.add_row({"bandwidth term (slowest level)", seconds(c.bandwidth_s)});
    total.add_row({"time", seconds(c.time_s())});
    total.add_row({"bottleneck", c.bottleneck.empty() ? "none" : c.bottleneck});
    total.add_row({"bound", c.latency_bound() ? "latency" : "bandwidth"});
    total.add_row({"algorithmic bandwidth", c.time_s() > 0 ? si(c.bytes / c.time_s(), "B/s") : ""});
    return text + total.render();
}

std::string collective_json(const Cluster& cluster, const CollectiveQuery& q) {
    const CollectiveCost& c = q.cost;
    nlohmann::json doc;
    doc["schema"] = "ridgeline.collective/1";
    doc["cluster"] = {{"name", cluster.name}, {"chip", cluster.chip_name}, {"chips", cluster.chips()}};
    doc["op"] = collective_name(c.kind);
    doc["bytes"] = c.bytes;
    doc["axes"] = q.axes;
    doc["group_size"] = c.group_size;
    doc["options"] = {{"destination_fraction", q.options.destination_fraction},
                      {"in_network_reduction", q.options.in_network_reduction},
                      {"asymptotic", q.options.asymptotic}};
    doc["levels"] = nlohmann::json::array();
    for (const auto& level : c.levels)
        doc["levels"].push_back({{"name", level.name}, {"bandwidth_s", level.bandwidth_s}, {"latency_s", level.latency_s}});
    doc["overhead_s"] = c.overhead_s;
    doc["latency_s"] = c.latency_s;
    doc["bandwidth_s"] = c.bandwidth_s;
    doc["time_s"] = c.time_s();
    doc["bottleneck"] = c.bottleneck;
    doc["bound"] = c.latency_bound() ? "latency" : "bandwidth";
    return doc.dump(2);
}

}  // namespace ridgeline::report
