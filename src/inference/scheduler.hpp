#pragma once
// A serving engine's scheduler (engines/*.json): how it forms each iteration's batch of decodes and
// prompt chunks, and how it holds the KV cache. Values are the engine's defaults at a named release.
// A preempted request is recomputed (vLLM V1's only policy, SGLang's retraction).
#include <cstdint>
#include <string>

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

}  // namespace ridgeline
