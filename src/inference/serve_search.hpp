#pragma once
// The serving search: over tensor, pipeline and expert parallelism, data-parallel replicas,
// batch sizes and weight and KV dtypes, the configurations that fit and meet the latency SLOs,
// ranked by cost or throughput, and the Pareto front of throughput per chip against tokens/s
// per user. Streams: keeps only the top K and the front, never the whole space.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/bound.hpp"

#include "hardware/system.hpp"
#include "inference/serving.hpp"

namespace ridgeline {

enum class ServeObjective { cost, throughput };

struct ServeSearchSpace : ServedModel {
    std::vector<std::int64_t> chip_counts;
    double input_len = 0, output_len = 0;
    double slo_ttft_s = 0, slo_tpot_s = 0;
    ServeObjective objective = ServeObjective::cost;
    std::size_t top_k = 10;
    std::int64_t max_batch_per_replica = 512;  // batches per replica: powers of two up to this
};

struct ServeCandidate {
    std::int64_t chips = 0;
    Plan plan;
    double batch_seqs = 0;  // whole deployment
    double ttft_s = 0, tpot_s = 0;
    double output_tokens_per_s = 0, output_tokens_per_s_per_chip = 0, tokens_per_s_per_user = 0;
    std::optional<double> cost_per_million_output_tokens_usd;
    double memory_per_chip_bytes = 0;
    Limit decode_bound;
    bool meets_slo = false;
};

struct ServeSearchResult {
    std::vector<ServeCandidate> best;    // meeting the SLOs, best first by the objective
    std::vector<ServeCandidate> pareto;  // among all that fit: by throughput per chip, then per user
    std::int64_t evaluated = 0, fitting = 0, meeting_slo = 0;
};

// InputError when the objective is cost and the chip has no price, or the space is empty.
[[nodiscard]] ServeSearchResult search_serving(const ServeSearchSpace& space);

[[nodiscard]] const char* objective_name(ServeObjective objective);

}  // namespace ridgeline
