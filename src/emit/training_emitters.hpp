#pragma once
// The training emitters, one a framework (emit_training.cpp dispatches), and what they share.
#include <cstdint>
#include <string>

#include "emit/emit_writer.hpp"
#include "engine/training.hpp"
#include "spec/plan.hpp"

namespace ridgeline::emit_detail {

// Refuses (knob placement) a plan whose mesh places the axes out of the framework's rank order:
// `group` ranks an axis name from innermost; `order` says the framework's order.
void check_rank_order(EmitWriter& w, const TrainingScenario& s, const std::string& order, int (*group)(const std::string&));

void megatron(EmitWriter& w, const TrainingScenario& s);
void maxtext(EmitWriter& w, const TrainingScenario& s);
void torchtitan(EmitWriter& w, const TrainingScenario& s);

}  // namespace ridgeline::emit_detail
