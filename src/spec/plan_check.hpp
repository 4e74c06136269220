#pragma once
// The rules a plan keeps, written once. Training, serving, both searches and the run-record
// reader ask them here, so no two entry points can disagree on whether a plan is valid.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.hpp"
#include "spec/plan.hpp"

namespace ridgeline {

// Why a plan was not costed, in the order reports list them. The first six are the model's and
// workload's rules on the degrees (model_rejection); the search finds the others while costing.
enum class Rejection {
    tensor_heads,            // tensor does not divide the query heads
    tensor_kv_heads,         // ... or the KV heads
    expert_count,            // expert does not divide the experts (or the model has none)
    pipeline_layers,         // more pipeline stages than layers
    context_seq,             // context does not divide the sequence
    batch_data,              // the data-parallel degree does not divide the global batch
    interleave_microbatches, // interleaving needs the micro-batches in whole rounds of the pipeline
    strategy_dims,           // the strategy splits some dimension unevenly (d_ff, d_model ...)
    placement,               // an axis (or a collective over it) does not fit the topology in this order
    memory,                  // does not fit in HBM
};
inline constexpr std::size_t kRejections = 10;

// A broken rule: the plan's field (as flags and files spell it) and a sentence for people.
struct PlanFault {
    std::string field;
    std::string message;
};

// The workload the degrees split: 0 leaves a size unchecked (serving has no sequence to split).
struct PlanWorkload {
    double seq_len = 0;
    double batch_seqs = 0;
    const char* batch_field = "global_batch";  // where the batch was given
};

// The first fault of an axis order (plan axes innermost first, some may be left out): a name that is
// no plan axis, or an axis named twice. The field is "placement.<name>".
[[nodiscard]] std::optional<PlanFault> placement_fault(const std::vector<std::string>& axes);

// A batch given in tokens as sequences of seq_len: nullopt unless that is a whole number, at least
// one. Flags, scenario files and the search take a batch in either unit through this.
[[nodiscard]] std::optional<double> batch_sequences(double batch_tokens, double seq_len);

// The first of the model's rules the degrees break, cheapest first: the search asks it of every
// layout. The degrees are at least 1 (structure_fault checks that).
[[nodiscard]] std::optional<Rejection> model_rejection(const ModelSpec& model, const Degrees& degrees, const PlanWorkload& workload);
// The field and sentence of a rejection model_rejection gave.
[[nodiscard]] PlanFault explain(Rejection why, const ModelSpec& model, const Degrees& degrees, const PlanWorkload& workload);
// Both at once: the first model rule broken, explained.
[[nodiscard]] std::optional<PlanFault> model_fault(const ModelSpec& model, const Degrees& degrees, const PlanWorkload& workload);

// dp as given, or what the chips leave over tp x pp x cp where they leave a whole number (else 0,
// which structure_fault explains).
[[nodiscard]] std::int64_t data_parallel_degree(const Degrees& degrees, std::int64_t chips);

// The plan among itself and against the chips: each degree 1..chips, dp x tp x pp x cp the chips
// (dp resolved), fsdp within dp, and the knobs that need a degree (vpp, sequence parallelism,
// resharding, expert tensor parallelism, DualPipe, the expert dispatch). The ZeRO stage is free
// beside fsdp (fsdp shards the weights the strategy names; the stage, optimizer and gradients).
[[nodiscard]] std::optional<PlanFault> structure_fault(const Plan& plan, std::int64_t chips);

// Both: the first fault of a plan with its dp resolved, or none.
[[nodiscard]] std::optional<PlanFault> plan_fault(const ModelSpec& model, const Plan& plan, std::int64_t chips, const PlanWorkload& workload);

}  // namespace ridgeline
