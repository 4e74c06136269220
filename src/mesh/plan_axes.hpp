#pragma once
// The mesh axes a plan splits its chips over, listed once. Strategy files, placements and
// reports spell them by these names; code names them by the enum.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ridgeline {

enum class PlanAxis : std::uint8_t { data, fsdp, expert, tensor, context, pipeline };
inline constexpr std::size_t kPlanAxes = 6;
inline constexpr std::array<const char*, kPlanAxes> kPlanAxisNames = {"data", "fsdp", "expert", "tensor", "context", "pipeline"};

[[nodiscard]] constexpr const char* axis_name(PlanAxis axis) { return kPlanAxisNames[static_cast<std::size_t>(axis)]; }

// Expert ranks folded over part of an axis (Megatron-Core carves ep from the tensor, context and
// data ranks in that order, taking the fastest-varying ranks): the axis is split, its inner part
// named "ep_<axis>" lying just inside it; the axis's groups span both parts.
inline constexpr std::string_view kExpertPartPrefix = "ep_";
[[nodiscard]] inline std::string expert_part_name(const std::string& axis) { return std::string(kExpertPartPrefix) + axis; }
// The axis a name belongs to: "context" for "ep_context", the name itself otherwise.
[[nodiscard]] inline std::string base_axis_name(const std::string& name) {
    return name.starts_with(kExpertPartPrefix) ? name.substr(kExpertPartPrefix.size()) : name;
}

}  // namespace ridgeline
