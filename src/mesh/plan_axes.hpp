#pragma once
// The mesh axes a plan splits its chips over, listed once. Strategy files, placements and
// reports spell them by these names; code names them by the enum.
#include <array>
#include <cstddef>
#include <cstdint>

namespace ridgeline {

enum class PlanAxis : std::uint8_t { data, fsdp, expert, tensor, context, pipeline };
inline constexpr std::size_t kPlanAxes = 6;
inline constexpr std::array<const char*, kPlanAxes> kPlanAxisNames = {"data", "fsdp", "expert", "tensor", "context", "pipeline"};

[[nodiscard]] constexpr const char* axis_name(PlanAxis axis) { return kPlanAxisNames[static_cast<std::size_t>(axis)]; }

}  // namespace ridgeline
