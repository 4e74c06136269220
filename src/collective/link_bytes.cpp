#include "collective/link_bytes.hpp"

#include <algorithm>

namespace ridgeline {

double spilled_fraction(double bytes, double on_chip_bytes) {
    if (bytes <= 0 || on_chip_bytes <= 0) return 1.0;
    return std::max(0.0, 1.0 - on_chip_bytes / (2.0 * bytes));
}

double collective_link_bytes(const ChipSpec& chip, CollectiveKind kind, double bytes) {
    const ChipEfficiency& e = chip.efficiency;
    const auto k = static_cast<std::size_t>(kind);
    const double spilled = spilled_fraction(bytes, chip.on_chip_memory_bytes);
    return bytes / e.collective * (spilled / e.collective_streaming[k] + (1.0 - spilled) / e.collective_cached[k]);
}

}  // namespace ridgeline
