#pragma once
// What-if settings on a resolved chip and system (`--set chip.hbm.bandwidth=4.8TB/s`): one named
// figure replaced before anything is built from it, so a question such as "what if NVLink were
// twice as fast?" needs no copied chip file. Each path names one field of the description files;
// values are typed with units and held to the same physical ranges as the files.
#include <string>
#include <vector>

#include "hardware/system.hpp"

namespace ridgeline {

// One setting as applied: the canonical path, the value before and after, and its unit.
struct AppliedSetting {
    std::string path;
    double before = 0;  // 0 where the description gave none (a price, a system figure)
    double after = 0;
    std::string unit;
    std::string by;  // what set it when not --set itself (e.g. "--memory-margin 0.05")
};

// "PATH=VALUE" settings, applied in order. InputError naming `set` (the flag) with the path when
// the path is unknown (listing the known ones), the value has the wrong unit or is out of range,
// or the hardware has no such part (NVLink on a TPU, a system figure on a bare chip). Settings
// of links are refused with `links_from_file` (a custom topology file gives its own links).
[[nodiscard]] std::vector<AppliedSetting> apply_settings(Hardware& hardware, const std::vector<std::string>& settings,
                                                         bool links_from_file = false);

}  // namespace ridgeline
