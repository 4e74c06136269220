#pragma once
// A serving engine's scheduler (engines/*.json): how it forms each iteration's batch of decodes and
// prompt chunks, and how it holds the KV cache. Values are the engine's defaults at a named release.
// A preempted request is recomputed (vLLM V1's only policy, SGLang's retraction).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace ridgeline {

// Where the cache's memory fraction applies: of all HBM (vLLM's gpu_memory_utilization, SGLang's
// mem_fraction_static), or of what the weights and activations leave free (TensorRT-LLM's
// free_gpu_memory_fraction).
enum class KvMemoryBasis { hbm, free_after_weights };

// When a request gets its cache blocks: as its tokens arrive, preempting the newest request when
// they run out (vLLM, SGLang), or all of prompt and output on admission, so that none is ever
// preempted (TensorRT-LLM's GUARANTEED_NO_EVICT).
enum class KvAdmission { on_demand, reserve_whole };

struct SchedulerSpec {
    std::string engine;   // "vllm"
    std::string version;  // the release whose defaults these are
    std::int64_t max_seqs = 256;             // sequences running at once
    std::int64_t max_batched_tokens = 8192;  // tokens in one iteration (decodes and prompt chunks)
    std::int64_t prefill_chunk_tokens = 8192;  // most of one prompt in one iteration
    bool chunked_prefill = true;             // a prompt longer than what is left of the budget is split
    // Decodes and prompt chunks share iterations (vLLM V1), or an iteration prefills only, ahead of
    // the decodes, whenever a prompt can start (SGLang without --enable-mixed-chunk).
    bool mixed_batches = true;
    std::int64_t kv_block_tokens = 16;       // the cache is allocated in blocks of this many tokens
    double kv_memory_fraction = 0.9;
    KvMemoryBasis kv_memory_basis = KvMemoryBasis::hbm;
    KvAdmission kv_admission = KvAdmission::on_demand;
};

// The scheduler's knobs, a row each: the field engines/*.json give it under "scheduler" (and the
// serve report's "engine" block, where reported), the member it sets and its bounds. The engine
// reader, the report and a schema test go through this table: a new knob is a member, a row here
// and its meaning in the simulator (inference/load.cpp).
struct SchedulerKnob {
    const char* key;
    std::variant<std::int64_t SchedulerSpec::*, bool SchedulerSpec::*, double SchedulerSpec::*, KvMemoryBasis SchedulerSpec::*,
                 KvAdmission SchedulerSpec::*>
        member;
    std::int64_t max = 0;      // counts: at most this many (and at least one)
    std::string_view choices;  // enumerations: the names in the file, in the enumeration's order
    bool reported = false;     // in the serve report's "engine" block
};

inline constexpr std::array<SchedulerKnob, 9> kSchedulerKnobs = {{
    {"max_seqs", &SchedulerSpec::max_seqs, 1'000'000, {}, true},
    {"max_batched_tokens", &SchedulerSpec::max_batched_tokens, 10'000'000, {}, true},
    {"prefill_chunk_tokens", &SchedulerSpec::prefill_chunk_tokens, 10'000'000, {}, false},
    {"kv_block_tokens", &SchedulerSpec::kv_block_tokens, 65'536, {}, true},
    {"chunked_prefill", &SchedulerSpec::chunked_prefill, 0, {}, true},
    {"mixed_batches", &SchedulerSpec::mixed_batches, 0, {}, false},
    {"kv_memory_fraction", &SchedulerSpec::kv_memory_fraction, 0, {}, true},  // in (0, 1)
    {"kv_memory_basis", &SchedulerSpec::kv_memory_basis, 0, "hbm,free_after_weights", false},
    {"kv_admission", &SchedulerSpec::kv_admission, 0, "on_demand,reserve_whole", false},
}};

// The name of an enumeration's `index`-th value in a row's choices ("" past the last).
[[nodiscard]] constexpr std::string_view scheduler_choice(std::string_view choices, std::size_t index) {
    for (; index > 0; --index) {
        const std::size_t comma = choices.find(',');
        if (comma == std::string_view::npos) return {};
        choices.remove_prefix(comma + 1);
    }
    return choices.substr(0, choices.find(','));
}

}  // namespace ridgeline
