#pragma once
// The frameworks Ridgeline writes configurations for, and the settings each one's emitter reads
// from its data file (emitters/<name>.json must map exactly these).
#include <array>
#include <string>
#include <vector>

#include "emit/emitter_spec.hpp"

namespace ridgeline {

struct EmitFramework {
    const char* name;
    EmitJob job;
    std::vector<std::string> settings;
    // The plan axes in the order the framework numbers ranks, innermost first (empty: it lays out
    // its own mesh); a search that writes for it places its plans so (emit/training_emitters.hpp
    // refuses any other order).
    std::vector<std::string> rank_order = {};
};

// nullptr for a name no emitter is written for.
[[nodiscard]] const EmitFramework* find_emit_framework(const std::string& name);
// "megatron, maxtext" (of one job), for messages.
[[nodiscard]] std::string emit_framework_names(EmitJob job);

}  // namespace ridgeline
