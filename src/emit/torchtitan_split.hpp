#pragma once
// How torchtitan (v0.2.2, torchtitan/distributed/pipeline_parallel.py) splits a model's layers
// over pipeline stages, so that --emit torchtitan and --from torchtitan agree with what it runs.
#include <cstdint>
#include <optional>
#include <vector>

namespace ridgeline {

// pipeline_llm: the virtual stages, ceil((layers + first_less + last_less) / layers_per_stage)
// when layers_per_stage is given, else pp x (1 for a single-stage schedule, 2 for a looped one).
[[nodiscard]] std::int64_t torchtitan_stage_count(std::int64_t pp, bool looped, std::optional<std::int64_t> layers_per_stage,
                                                  std::int64_t layers, std::int64_t first_less, std::int64_t last_less);

// generate_llm_fqn_per_model_part: the embedding weighs `first_less` layers and the output
// `last_less`; the sum is spread evenly over the stages, the remainder on the first ones. Layers
// of each stage; nullopt where torchtitan refuses the split (a stage left empty, a weight above
// the smallest share).
[[nodiscard]] std::optional<std::vector<std::int64_t>> torchtitan_stage_layers(std::int64_t stages, std::int64_t layers, std::int64_t first_less,
                                                                             std::int64_t last_less);

// Layers on each of `pp` ranks when rank r holds stages r, r + pp, ... (torchtitan's looped
// schedules; a single-stage schedule is the case of one stage a rank).
[[nodiscard]] std::vector<std::int64_t> layers_per_rank(const std::vector<std::int64_t>& stage_layers, std::int64_t pp);

}  // namespace ridgeline
