#pragma once
// A deployment's dtypes, a row each: the field the serving reports and launch-file emitters name
// it by, the `serve` flag, the Plan member it sets and the dtypes it takes. The flags, the reports'
// plan and the emitters' settings go through this table: a new serving dtype is a Plan member, a
// row here and its meaning in the serving engine.
#include <array>
#include <optional>
#include <string_view>
#include <variant>

#include "spec/plan.hpp"

namespace ridgeline {

struct ServingKnob {
    const char* key;   // report field and emitter setting
    const char* flag;  // `serve` flag, without the dashes
    // An optional member left unset follows the weights' dtype (and is not reported).
    std::variant<Dtype Plan::*, std::optional<Dtype> Plan::*> member;
    std::string_view choices;  // comma-separated
    bool emitted;              // launch files carry it
    const char* help;
};

// In the order launch files list them.
inline constexpr std::array<ServingKnob, 3> kServingKnobs = {{
    {"kv_dtype", "kv-dtype", &Plan::kv_cache, "bf16,fp8,int8", true, "KV cache: bf16, fp8 or int8"},
    {"weights_dtype", "weights-dtype", &Plan::weights, "bf16,fp8,int8,int4", true,
     "weights as stored: bf16, fp8 (fp8 GEMMs), int8 or int4 (weight-only)"},
    {"attention_weights_dtype", "attention-weights-dtype", &Plan::attention_weights, "bf16,fp8,int8,int4", false,
     "the attention projections' dtype where the checkpoint leaves them unquantised (Llama 3.1 405B FP8: bf16); default: --weights-dtype"},
}};

// The row's dtype in `plan`; nullopt for an optional row left unset.
[[nodiscard]] inline std::optional<Dtype> serving_dtype(const Plan& plan, const ServingKnob& knob) {
    if (const auto* member = std::get_if<Dtype Plan::*>(&knob.member)) return plan.**member;
    return plan.*std::get<std::optional<Dtype> Plan::*>(knob.member);
}

}  // namespace ridgeline
