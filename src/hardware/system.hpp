#pragma once
// A system users name (a TPU pod, a DGX node type, a GB200 NVL72 rack): which chip, how chips
// form scale-up domains (torus or switch), and how domains are joined.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/chip.hpp"

namespace ridgeline {

struct ScaleUpSpec {
    enum class Kind { torus, switched };
    Kind kind = Kind::switched;
    std::vector<std::int64_t> torus_dims;  // torus only: the largest slice
    std::int64_t wrap_multiple_of = 0;     // torus only: see wrap_rule
    // per_axis: an axis wraps iff its size is a multiple of wrap_multiple_of (v5e, v6e);
    // whole_slice: every axis wraps iff all axes are such multiples (v4, v5p cubes), none otherwise.
    enum class WrapRule { per_axis, whole_slice };
    WrapRule wrap_rule = WrapRule::per_axis;
    std::int64_t domain_size = 0;          // switched only: chips per NVLink domain

    [[nodiscard]] std::int64_t max_domain_chips() const {
        if (kind == Kind::switched) return domain_size;
        std::int64_t chips = 1;
        for (std::int64_t dim : torus_dims) chips *= dim;
        return chips;
    }
};

// What running a job on the system costs beyond its steps, each figure sourced in the system file
// (any may be missing where nothing citable was found): how often chips fail, how long a restart
// takes, how fast checkpoints reach storage, and the power beyond the chips.
struct SystemOperations {
    std::optional<double> failures_per_chip_hour;  // unexpected job interruptions, per chip-hour
    std::optional<double> restart_s;               // detect, reschedule, reload the last checkpoint
    std::optional<double> checkpoint_write_Bps_per_host;
    std::optional<double> checkpoint_write_Bps_total;  // the storage system's own limit
    std::optional<double> host_w;                  // per host, beyond its accelerators
    std::optional<double> pue;                     // facility over IT power
};

struct SystemSpec {
    std::string name;
    std::string description;
    std::string chip_name;
    std::int64_t chips_per_host = 0;
    ScaleUpSpec scale_up;
    std::string scale_out_kind;
    std::optional<std::int64_t> max_scale_out_domains;
    std::optional<std::int64_t> domains_per_leaf;  // fat tree: domains (nodes) under one leaf group
    double oversubscription = 1.0;                 // fat tree: leaf downlink / uplink bandwidth
    std::optional<SystemOperations> operations;
};

// What a --hardware name resolves to: always a chip, and the system around it where known.
struct Hardware {
    ChipSpec chip;
    std::optional<SystemSpec> system;
};

}  // namespace ridgeline
