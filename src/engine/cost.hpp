#pragma once
// Dollars: chips held for a time at the chip file's hourly list price. The one place prices turn
// into costs; nullopt where the chip file gives no price.
#include <optional>

#include "hardware/chip.hpp"

namespace ridgeline {

[[nodiscard]] inline std::optional<double> cost_usd(const ChipSpec& chip, double chips, double seconds) {
    constexpr double kSecondsPerHour = 3600.0;
    if (!chip.price_usd_per_chip_hour) return std::nullopt;
    return *chip.price_usd_per_chip_hour * chips * seconds / kSecondsPerHour;
}

}  // namespace ridgeline
