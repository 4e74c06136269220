#include "topology/topology_file.hpp"

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "io/json_reader.hpp"
#include "topology/graph.hpp"
#include "topology/graph_routing.hpp"
#include "model/plausible_sizes.hpp"

namespace ridgeline {

namespace {

constexpr const char* kFormat = "ridgeline.topology/1";
constexpr double kMaxLinksPerChip = 64;
constexpr double kMaxGraphWork = 1.25e8;  // chips x links: a 4,096-chip hypercube (12 links per chip) is 1.0e8

// A graph must be one piece (a search from chip 0, linear in the links); what collectives need
// from it is routed later, when one first crosses it.
void check_connected(const PhysicalDim& dim, const std::string& origin, const std::string& field) {
    Cluster alone;
    alone.dims.push_back(dim);
    if (!TopologyGraph(alone).connected()) throw InputError(origin, field, "the graph is disconnected: some chips cannot reach chip 0");
}

}  // namespace

CustomTopology load_topology_file(const std::filesystem::path& path, const std::filesystem::path& data_dir) {
    const std::string origin = path.string();
    io::JsonFile file(path, kFormat);
    io::JsonObject& root = file.root();
    CustomTopology topology;
    topology.cluster.name = root.string("name");
    (void)root.optional_string("description");
    const std::string chip_name = root.string("chip");
    const auto chips = list_chips(data_dir);
    const auto entry = io::find_entry(chips, chip_name);
    if (!entry) root.fail("chip", "unknown chip \"" + chip_name + "\"; known: " + io::known_names(chips));
    topology.hardware.chip = load_chip_file(entry->file);
    topology.cluster.chip_name = topology.hardware.chip.name;
    topology.cluster.collective_overhead_s = root.optional_sourced_in("collective_overhead_s", io::range::latency_s).value_or(0.0);

    const auto& levels = root.raw("levels");
    if (!levels.is_array() || levels.empty()) root.fail("levels", "expected a non-empty array of levels, innermost first");
    if (levels.size() > 4) root.fail("levels", "expected at most 4 levels");
    std::int64_t chips_per_member = 1;  // chips inside one member of the current level
    for (std::size_t index = 0; index < levels.size(); ++index) {
        const std::string field = "levels[" + std::to_string(index) + "]";
        io::JsonObject level(levels[index], origin, field);
        const int level_index = static_cast<int>(index);
        const std::string kind = level.string("kind");
        const std::string name = level.optional_string("name").value_or(kind + std::to_string(index));
        std::int64_t level_chips = 1;
        if (kind == "switch" || kind == "graph") {
            if (index != 0) level.fail("kind", "a " + kind + " level must be the innermost");
            const std::int64_t extent = level.positive_int(kind == "switch" ? "size" : "chips");
            const double bandwidth =
                level.sourced_in(kind == "switch" ? "bw_per_chip_Bps_one_way" : "link_bw_Bps_one_way", io::range::bandwidth_Bps);
            PhysicalDim dim = make_switched_dim(name, extent, bandwidth, level.sourced_in("hop_latency_s", io::range::latency_s));
            if (kind == "graph") dim.kind = DimKind::graph;
            if (kind == "graph") {
                if (dim.extent > 4096) level.fail("chips", "custom graphs of more than 4096 chips are not supported");
                const auto& links = level.raw("links");
                if (!links.is_array() || links.empty()) level.fail("links", "expected an array of [a, b] chip pairs");
                // Routing all pairs over the graph is chips x links work, done once per process when a
                // collective first crosses the level: bounded so that it takes about a second.
                const double chip_count = static_cast<double>(dim.extent), count = static_cast<double>(links.size());
                if (count > kMaxLinksPerChip * chip_count)
                    level.fail("links", std::to_string(links.size()) + " links for " + std::to_string(dim.extent) + " chips; at most " +
                                            std::to_string(static_cast<int>(kMaxLinksPerChip)) + " per chip");
                if (count * chip_count > kMaxGraphWork)
                    level.fail("links", std::to_string(links.size()) + " links over " + std::to_string(dim.extent) +
                                            " chips is more than the all-pairs routing can analyse (chips x links <= 1.25e8)");
                for (std::size_t l = 0; l < links.size(); ++l) {
                    const auto& pair = links[l];
                    const std::string link_field = field + ".links[" + std::to_string(l) + "]";
                    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() || !pair[1].is_number_integer())
                        throw InputError(origin, link_field, "expected [a, b] with two chip indices");
                    const auto a = pair[0].get<std::int64_t>(), b = pair[1].get<std::int64_t>();
                    if (a < 0 || b < 0 || a >= dim.extent || b >= dim.extent || a == b)
                        throw InputError(origin, link_field, "chip indices must be distinct and below " + std::to_string(dim.extent));
                    dim.links.emplace_back(a, b);
                }
                check_connected(dim, origin, field + ".links");
                dim.routing = std::make_shared<const GraphRouting>(dim);
            }
            level_chips = dim.extent;
            topology.cluster.dims.push_back(dim);
        } else if (kind == "torus") {
            const auto dims = level.positive_int_list("dims");
            const auto& wraps = level.raw("wraps");
            if (!wraps.is_array() || wraps.size() != dims.size())
                level.fail("wraps", "expected one true/false per torus axis");
            const double link_bw = level.sourced_in("link_bw_Bps_one_way", io::range::bandwidth_Bps);
            const double latency = level.sourced_in("hop_latency_s", io::range::latency_s);
            static const char* inner_names[] = {"x", "y", "z", "w"};
            if (dims.size() > 4) level.fail("dims", "expected at most 4 torus axes");
            for (std::size_t a = 0; a < dims.size(); ++a) {
                if (!wraps[a].is_boolean()) level.fail("wraps", "expected true or false");
                const std::string axis_name = index == 0 ? inner_names[a] : name + std::to_string(a);
                // A link between two domains is shared by all their chips.
                topology.cluster.dims.push_back(make_ring_dim(axis_name, level_index, dims[a], wraps[a].get<bool>(),
                                                              link_bw / static_cast<double>(chips_per_member), latency));
                level_chips *= dims[a];
            }
        } else if (kind == "fat_tree" || kind == "dcn") {
            if (index == 0) level.fail("kind", "a " + kind + " level joins domains; put a switch, torus or graph level first");
            const std::int64_t extent = level.positive_int(kind == "dcn" ? "slices" : "nodes");
            const double bandwidth = level.sourced_in("bw_per_chip_Bps_one_way", io::range::bandwidth_Bps);
            const double latency = level.sourced_in("latency_s", io::range::latency_s);
            const std::int64_t per_leaf = level.optional_positive_int("nodes_per_leaf").value_or(extent);
            PhysicalDim dim = make_fabric_dim(name, level_index, extent, bandwidth, latency, per_leaf,
                                              level.optional_sourced_in("oversubscription", io::range::oversubscription).value_or(1.0));
            if (dim.oversubscription < 1.0) level.fail("oversubscription", "expected a ratio >= 1 (downlink : uplink)");
            level_chips = dim.extent;
            topology.cluster.dims.push_back(dim);
        } else {
            level.fail("kind", "expected switch, torus, graph, fat_tree or dcn, found \"" + kind + "\"");
        }
        level.finish();
        chips_per_member *= level_chips;
        if (chips_per_member > kMaxChips) level.fail("kind", "more than 10 million chips");
    }
    root.finish();
    return topology;
}

}  // namespace ridgeline
