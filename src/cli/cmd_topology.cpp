#include <iostream>
#include <sstream>

#include "cli/cluster_flags.hpp"
#include "collective/collective.hpp"
#include "core/error.hpp"
#include "io/quantity_text.hpp"
#include "report/reports.hpp"
#include "topology/topology_summary.hpp"

namespace ridgeline::cli {

void add_topology_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        ClusterFlags cluster;
        bool json = false;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = app.add_subcommand(
        "topology", "a cluster's interconnect levels and its graph: hops, bisection bandwidth, link loads");
    add_cluster_flags(*command, flags->cluster);
    command->add_flag("--json", flags->json, "print one JSON document (schema ridgeline.topology-report/1)");
    command->callback([flags, &options] {
        const ResolvedCluster resolved = resolve_cluster(flags->cluster, options);
        const TopologySummary summary = summarize_topology(resolved.cluster);
        std::cout << with_settings(resolved.settings, flags->json,
                                   flags->json ? report::topology_json(summary) : report::topology_table(summary))
                  << "\n";
    });
}

void add_collective_command(CLI::App& app, const GlobalOptions& options) {
    struct Flags {
        ClusterFlags cluster;
        std::string op;
        std::string bytes;
        std::string axes;
        double destination_fraction = 1.0;
        bool sharp = false;
        bool asymptotic = false;
        bool json = false;
    };
    auto flags = std::make_shared<Flags>();
    CLI::App* command = app.add_subcommand("collective", "time of a collective over mesh axes, its bound and bottleneck");
    add_cluster_flags(*command, flags->cluster);
    command->add_option("--op", flags->op, "allgather, reducescatter, allreduce, alltoall, permute or broadcast")->required();
    command->add_option("--bytes", flags->bytes, "array size: 1GiB, 512MB, 4e9 (the gathered / reduced / exchanged array)")
        ->required();
    command->add_option("--axes", flags->axes, "mesh axes the collective spans, comma-separated (default: all)");
    command->add_option("--destination-fraction", flags->destination_fraction,
                        "ragged (top-k) AllToAll: share of destinations each device sends to, min(k/N, 1)")
        ->check(CLI::Range(1e-9, 1.0));
    command->add_flag("--sharp", flags->sharp, "in-network reduction (SHARP / NVLS) for AllReduce on switches");
    command->add_flag("--asymptotic", flags->asymptotic, "large-group forms without (N-1)/N factors, as hand analyses use");
    command->add_flag("--json", flags->json, "print one JSON document (schema ridgeline.collective/1)");
    command->callback([flags, &options] {
        const ResolvedCluster resolved = resolve_cluster(flags->cluster, options);
        const auto kind = parse_collective(flags->op);
        if (!kind)
            throw InputError("--op", "", "unknown collective \"" + flags->op +
                                             "\" (allgather, reducescatter, allreduce, alltoall, permute, broadcast)");
        report::CollectiveQuery query;
        if (flags->axes.empty()) {
            for (const auto& placed : resolved.mesh.axes) query.axes.push_back(placed.axis.name);
        } else {
            std::stringstream stream(flags->axes);
            std::string name;
            while (std::getline(stream, name, ',')) query.axes.push_back(name);
        }
        query.options.destination_fraction = flags->destination_fraction;
        query.options.in_network_reduction = flags->sharp;
        query.options.asymptotic = flags->asymptotic;
        const double bytes = io::parse_bytes(flags->bytes, "--bytes");
        query.cost = collective_cost(resolved.cluster, group_footprint(resolved.mesh, query.axes, "--axes"), *kind, bytes,
                                     query.options);
        std::cout << with_settings(resolved.settings, flags->json,
                                   flags->json ? report::collective_json(resolved.cluster, query)
                                               : report::collective_table(resolved.cluster, query))
                  << "\n";
    });
}

}  // namespace ridgeline::cli
