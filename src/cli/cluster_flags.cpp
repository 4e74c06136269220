#include "cli/cluster_flags.hpp"


#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "io/catalog_lookup.hpp"
#include "io/quantity_text.hpp"
#include "topology/topology_file.hpp"
#include "model/plausible_sizes.hpp"

namespace ridgeline::cli {

void add_cluster_flags(CLI::App& command, ClusterFlags& flags) {
    command.add_option("--hardware", flags.hardware, "system or chip name (see `ridgeline hardware`) or file");
    command.add_option("--topology", flags.topology,
                       "TPU slice shape such as 4x4x8, or a custom topology file (ridgeline.topology/1)");
    command.add_option("--nodes", flags.nodes, "scale-out domains: DGX nodes, NVL72 racks or TPU slices")
        ->check(CLI::Range(std::int64_t{1}, kMaxChips));
    command.add_option("--chips", flags.chips, "total chips (shaped automatically)")
        ->check(CLI::Range(std::int64_t{1}, kMaxChips));
    command.add_option("--mesh", flags.mesh, "named mesh axes, e.g. data=16,tensor=8 (default: the physical dimensions)");
    command.add_option("--placement", flags.placement, "mesh axes innermost first (default: most communication-hungry innermost)");
    command.add_option("--links", flags.links,
                       "datasheet: links at their line rate, as hand analyses take them (default); measured: at the share "
                       "of it collectives were measured to reach, as train and serve price them")
        ->check(CLI::IsMember({"datasheet", "measured"}));
    add_what_if_flags(command, flags.what_if);
}

ResolvedCluster resolve_cluster(const ClusterFlags& flags, const GlobalOptions& options) {
    ResolvedCluster resolved;
    if (!flags.topology.empty() && io::looks_like_path(flags.topology)) {
        if (flags.nodes > 0 || flags.chips > 0)
            throw InputError("--topology", "", "a topology file fixes the cluster size; drop --nodes and --chips");
        CustomTopology custom = load_topology_file(flags.topology, options.data_dir);
        resolved.settings = apply_what_if(custom.hardware, flags.what_if, true);
        resolved.cluster = custom.cluster;
    } else {
        if (flags.hardware.empty()) throw InputError("--hardware", "", "required (or give a topology file with --topology)");
        Hardware hardware = resolve_hardware(flags.hardware, options.data_dir);
        resolved.settings = apply_what_if(hardware, flags.what_if);
        ClusterShape shape;
        if (!flags.topology.empty()) shape.torus_dims = io::parse_torus_shape(flags.topology, "--topology");
        shape.domains = flags.nodes;
        shape.chips = flags.chips;
        shape.datasheet_links = flags.links == "datasheet";
        resolved.cluster = build_cluster(hardware, shape);
    }
    if (flags.mesh.empty()) {
        if (!flags.placement.empty()) throw InputError("--placement", "", "give --mesh to place");
        resolved.mesh = physical_mesh(resolved.cluster);
    } else {
        resolved.mesh = place_mesh(resolved.cluster, parse_mesh(flags.mesh, "--mesh"), io::split_list(flags.placement));
    }
    return resolved;
}

}  // namespace ridgeline::cli
