#pragma once
// A collective's bytes as its link would move them at full rate: the chip's collective
// efficiency, for its kind, split between the part of the message that streams from memory and
// the part whose working set stays in on-chip memory.
#include "collective/collective.hpp"
#include "hardware/chip.hpp"

namespace ridgeline {

// `bytes` as collective_cost counts them (gathered output, unreduced input).
[[nodiscard]] double collective_link_bytes(const ChipSpec& chip, CollectiveKind kind, double bytes);

// The share of a message of `bytes` whose working set (the message and the buffer it passes
// through, twice the message) does not fit in `on_chip_bytes`: 0 for small messages, towards 1.
[[nodiscard]] double spilled_fraction(double bytes, double on_chip_bytes);

}  // namespace ridgeline
