#include "topology/cluster.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace ridgeline {

PhysicalDim make_ring_dim(std::string name, int level, std::int64_t extent, bool wraps, double link_bw_Bps_one_way,
                          double hop_latency_s) {
    PhysicalDim dim;
    dim.name = std::move(name);
    dim.kind = DimKind::ring;
    dim.level = level;
    dim.extent = extent;
    dim.wraps = wraps;
    dim.bw_per_chip_Bps_one_way = link_bw_Bps_one_way;
    dim.hop_latency_s = hop_latency_s;
    return dim;
}

PhysicalDim make_switched_dim(std::string name, std::int64_t extent, double bw_per_chip_Bps_one_way, double hop_latency_s) {
    PhysicalDim dim = make_ring_dim(std::move(name), 0, extent, false, bw_per_chip_Bps_one_way, hop_latency_s);
    dim.kind = DimKind::switched;
    return dim;
}

PhysicalDim make_fabric_dim(std::string name, int level, std::int64_t extent, double bw_per_chip_Bps_one_way,
                            double latency_s, std::int64_t members_per_leaf, double oversubscription) {
    PhysicalDim dim = make_ring_dim(std::move(name), level, extent, false, bw_per_chip_Bps_one_way, latency_s);
    dim.kind = DimKind::fabric;
    dim.members_per_leaf = members_per_leaf;
    dim.oversubscription = oversubscription;
    return dim;
}

std::int64_t Cluster::chips() const {
    std::int64_t total = 1;
    for (const PhysicalDim& dim : dims) total *= dim.extent;
    return total;
}

std::int64_t Cluster::chips_per_domain() const {
    std::int64_t total = 1;
    for (const PhysicalDim& dim : dims)
        if (dim.level == 0) total *= dim.extent;
    return total;
}

int Cluster::find_dim(const std::string& dim_name) const {
    for (std::size_t i = 0; i < dims.size(); ++i)
        if (dims[i].name == dim_name) return static_cast<int>(i);
    return -1;
}

namespace {

std::vector<bool> torus_wraps(const std::vector<std::int64_t>& dims, const ScaleUpSpec& scale_up) {
    std::vector<bool> wraps(dims.size(), false);
    const auto wraps_alone = [&](std::int64_t dim) { return dim > 2 && dim % scale_up.wrap_multiple_of == 0; };
    if (scale_up.wrap_rule == ScaleUpSpec::WrapRule::per_axis) {
        for (std::size_t i = 0; i < dims.size(); ++i) wraps[i] = wraps_alone(dims[i]);
    } else {
        const bool whole = std::all_of(dims.begin(), dims.end(), [&](std::int64_t d) { return d % scale_up.wrap_multiple_of == 0; });
        for (std::size_t i = 0; i < dims.size(); ++i) wraps[i] = whole && dims[i] > 2;
    }
    return wraps;
}

void check_fits_pod(const std::vector<std::int64_t>& dims, const ScaleUpSpec& scale_up) {
    if (dims.size() != scale_up.torus_dims.size())
        throw InputError(kRequest, "topology", "expected " + std::to_string(scale_up.torus_dims.size()) +
                                               " torus axes for this system");
    std::vector<std::int64_t> wanted = dims, limit = scale_up.torus_dims;
    std::sort(wanted.begin(), wanted.end());
    std::sort(limit.begin(), limit.end());
    for (std::size_t i = 0; i < wanted.size(); ++i)
        if (wanted[i] > limit[i]) {
            std::string pod;
            for (auto d : scale_up.torus_dims) {
                if (!pod.empty()) pod += 'x';
                pod += std::to_string(d);
            }
            throw InputError(kRequest, "topology", "shape does not fit in the largest slice " + pod);
        }
}

}  // namespace

std::vector<std::int64_t> auto_torus_shape(std::int64_t chips, const ScaleUpSpec& scale_up) {
    const std::size_t axes = scale_up.torus_dims.size();
    std::vector<std::int64_t> best;
    double best_score = 1e300;
    std::vector<std::int64_t> current(axes, 1);
    // Enumerate factorisations axis by axis (at most a few hundred for pod-sized counts).
    const auto search = [&](auto&& self, std::size_t axis, std::int64_t remaining) -> void {
        if (axis + 1 == axes) {
            current[axis] = remaining;
            std::vector<std::int64_t> sorted = current, limit = scale_up.torus_dims;
            std::sort(sorted.begin(), sorted.end());
            std::sort(limit.begin(), limit.end());
            for (std::size_t i = 0; i < axes; ++i)
                if (sorted[i] > limit[i]) return;
            const auto wraps = torus_wraps(current, scale_up);
            const auto wrapped = static_cast<double>(std::count(wraps.begin(), wraps.end(), true));
            const double spread = static_cast<double>(sorted.back()) / static_cast<double>(sorted.front());
            const double score = spread - 10.0 * wrapped;  // wraparound first, then the most cube-like
            if (score < best_score) {
                best_score = score;
                best = sorted;
            }
            return;
        }
        for (std::int64_t factor = 1; factor <= remaining; ++factor)
            if (remaining % factor == 0) {
                current[axis] = factor;
                self(self, axis + 1, remaining / factor);
            }
    };
    if (axes > 0 && chips > 0 && chips <= scale_up.max_domain_chips()) search(search, 0, chips);
    return best;
}

Cluster build_cluster(const Hardware& hardware, const ClusterShape& shape) {
    if (!hardware.system)
        throw InputError(kRequest, "hardware", hardware.chip.name + " has no system description to build a cluster from");
    const SystemSpec& system = *hardware.system;
    const ChipSpec& chip = hardware.chip;
    Cluster cluster;
    cluster.name = system.name;
    cluster.chip_name = chip.name;

    std::int64_t domain_chips = 0;
    if (system.scale_up.kind == ScaleUpSpec::Kind::torus) {
        if (!chip.ici) throw InputError(kRequest, "hardware", chip.name + " has no ICI description for a torus");
        std::vector<std::int64_t> dims = shape.torus_dims;
        if (dims.empty()) {
            std::int64_t slice_chips = shape.chips;
            if (shape.domains > 0) {
                if (shape.chips % shape.domains != 0)
                    throw InputError(kRequest, "chips", std::to_string(shape.chips) + " chips do not split into " +
                                                        std::to_string(shape.domains) + " slices");
                slice_chips = shape.chips / shape.domains;
            } else if (slice_chips > system.scale_up.max_domain_chips()) {
                // Larger than one pod: whole pods joined over DCN.
                if (slice_chips % system.scale_up.max_domain_chips() != 0)
                    throw InputError(kRequest, "chips", std::to_string(shape.chips) + " chips exceed one pod of " +
                                                        std::to_string(system.scale_up.max_domain_chips()) +
                                                        " and are not a whole number of pods");
                slice_chips = system.scale_up.max_domain_chips();
            }
            if (slice_chips < 1) throw InputError(kRequest, "chips", "expected a positive chip count");
            dims = auto_torus_shape(slice_chips, system.scale_up);
            if (dims.empty())
                throw InputError(kRequest, "chips", std::to_string(slice_chips) + " chips cannot be shaped into a torus of " +
                                                    system.name + "; give topology");
        }
        check_fits_pod(dims, system.scale_up);
        const auto wraps = torus_wraps(dims, system.scale_up);
        static const char* names[] = {"x", "y", "z", "w"};
        for (std::size_t i = 0; i < dims.size(); ++i)
            cluster.dims.push_back(
                make_ring_dim(names[i], 0, dims[i], wraps[i], chip.ici->link_bw_Bps_one_way, chip.ici->hop_latency_s));
        domain_chips = 1;
        for (auto d : dims) domain_chips *= d;
    } else {
        if (!chip.nvlink) throw InputError(kRequest, "hardware", chip.name + " has no NVLink description for a switch domain");
        domain_chips = system.scale_up.domain_size;
        if (shape.chips > 0 && shape.chips < domain_chips && shape.domains <= 1) domain_chips = shape.chips;  // part of one node
        if (shape.chips > domain_chips && shape.chips % domain_chips != 0) {
            // Part of each domain (GB200 jobs of 64 GPUs, 16 trays, per NVL72 rack): the fewest
            // domains that hold the chips, or those given, each with an equal share of whole hosts.
            const std::int64_t spread = shape.domains > 0 ? shape.domains : (shape.chips + domain_chips - 1) / domain_chips;
            const std::int64_t share = shape.chips / spread, host = std::max<std::int64_t>(system.chips_per_host, 1);
            if (shape.chips % spread == 0 && share <= domain_chips && share % host == 0) domain_chips = share;
        }
        if (!shape.torus_dims.empty())
            throw InputError(kRequest, "topology", system.name + " is a switched system; give nodes or chips");
        cluster.dims.push_back(
            make_switched_dim("nvlink", domain_chips, chip.nvlink->bw_per_chip_Bps_one_way, chip.nvlink->hop_latency_s));
        if (!shape.datasheet_links) cluster.dims.back().collective_fraction = chip.nvlink->collective_fraction;
    }

    std::int64_t domains = shape.domains;
    if (domains == 0) {
        const std::int64_t chips = shape.chips > 0 ? shape.chips : domain_chips;
        if (chips % domain_chips != 0)
            throw InputError(kRequest, "chips", std::to_string(chips) + " chips are not a whole number of " +
                                                std::to_string(domain_chips) + "-chip domains");
        domains = chips / domain_chips;
    } else if (shape.chips > 0 && shape.chips != domains * domain_chips) {
        throw InputError(kRequest, "chips", std::to_string(shape.chips) + " chips do not match " + std::to_string(domains) +
                                            " domains of " + std::to_string(domain_chips));
    }
    if (system.max_scale_out_domains && domains > *system.max_scale_out_domains)
        throw InputError(kRequest, "nodes", "at most " + std::to_string(*system.max_scale_out_domains) + " domains");
    if (domains > 1) {
        cluster.dims.push_back(make_fabric_dim(system.scale_out_kind == "dcn" ? "dcn" : "ib", 1, domains,
                                               chip.scale_out.bw_per_chip_Bps_one_way, chip.scale_out.latency_s,
                                               system.domains_per_leaf.value_or(domains), system.oversubscription));
        if (!shape.datasheet_links) cluster.dims.back().collective_fraction = chip.scale_out.collective_fraction;
    }
    return cluster;
}

}  // namespace ridgeline
