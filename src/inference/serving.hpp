#pragma once
// Serving a model: prefill (time to first token) and decode (time per output token) of one
// replica, each layer's FLOPs, weight and KV-cache traffic and collectives on the chip's roofline,
// memory per chip, throughput and cost. Pure: specs in, report out.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collective/collective.hpp"
#include "core/dtype.hpp"
#include "engine/bound.hpp"
#include "hardware/chip.hpp"
#include "hardware/system.hpp"
#include "mesh/mesh.hpp"
#include "model/model_spec.hpp"
#include "spec/plan.hpp"
#include "sharding/strategy.hpp"
#include "stack/stack.hpp"
#include "topology/cluster.hpp"

namespace ridgeline {

// A deployment (a Plan): dp replicas of tp x pp chips each; ep groups of replicas share the
// routed experts (each chip holds 1/ep of them), as expert parallelism carved from data
// parallelism, as in training (no fsdp, no cp). Deployments split heads and MLP widths over
// tensor and experts over expert: Megatron's layout,
// which vLLM and TensorRT-LLM run.
inline constexpr const char* kServingStrategy = "megatron-3d";

// What is served on what: the model, the chip or system, and how the plan's axes split the layer.
struct ServedModel {
    ModelSpec model;
    Hardware hardware;
    Strategy strategy;  // kServingStrategy, as loaded from strategies/
    Stack stack;        // the serving framework (its attention kernel)
};

// Speculative decoding with the model's multi-token prediction modules (DeepSeek-V3): each step the
// modules draft `draft_tokens` tokens one after another, the model verifies them with the next
// token in one pass, and each draft is accepted with probability `acceptance` if those before it were.
struct SpeculativeDecoding {
    std::int64_t draft_tokens = 0;
    double acceptance = 0;
    // Tokens a step yields: 1 + a + a^2 + ... + a^draft_tokens.
    [[nodiscard]] double tokens_per_step() const {
        double tokens = 1, accepted = 1;
        for (std::int64_t i = 0; i < draft_tokens; ++i) tokens += (accepted *= acceptance);
        return tokens;
    }
};

// What is asked of a deployment: the requests it serves at once and their lengths.
struct ServingLoad {
    double batch_seqs = 1;  // sequences decoded together over the whole deployment
    double input_len = 0;   // prompt tokens per request
    double output_len = 0;  // generated tokens per request
    SpeculativeDecoding speculative;
};

struct ServingScenario : ServingLoad {
    ModelSpec model;
    ChipSpec chip;  // with its efficiencies
    Cluster cluster;
    Mesh mesh;      // axes data, expert, tensor, pipeline placed on the cluster
    Plan plan;
    Strategy strategy;      // how the plan's axes split the layer (kServingStrategy)
    Stack stack;
    [[nodiscard]] double batch_per_replica() const { return batch_seqs / static_cast<double>(plan.dp); }
};

struct CollectiveUse {
    std::string what;  // "tensor-parallel all-reduce (attention out)", ...
    CollectiveKind kind = CollectiveKind::all_reduce;
    std::string axis;
    double bytes = 0;   // logical array, per layer
    double time_s = 0;  // per layer, averaged over dense and MoE layers
    std::string bottleneck;
};

// One average layer on one chip (MoE and dense layers weighted by their counts).
struct LayerCost {
    double matmul_flops = 0;
    double attention_flops = 0;
    double weight_bytes = 0;
    double kv_bytes = 0;          // KV cache read (decode) or written (prefill)
    double activation_bytes = 0;
    double matmul_compute_s = 0;  // at the chip's matmul efficiency
    double matmul_memory_s = 0;   // weights and activations at the achievable HBM bandwidth
    double matmul_s = 0;          // each matmul at its own roofline (sum of the maxima)
    double matmul_compute_bound_s = 0;  // the part of matmul_s in compute-bound matmuls
    double attention_compute_s = 0;
    double attention_memory_s = 0;
    double collective_s = 0;
    std::vector<CollectiveUse> collectives;
    [[nodiscard]] double attention_s() const {
        return attention_compute_s > attention_memory_s ? attention_compute_s : attention_memory_s;
    }
    [[nodiscard]] double time_s() const { return matmul_s + attention_s() + collective_s; }
};

// A prefill or a decode step: its layers, the output layer and the pipeline hops, and what bounds it.
struct PhaseCost {
    double tokens = 0;           // per replica in this pass (micro-batch for decode with pp)
    double context = 0;          // keys each query attends to (decode: mean over the generation)
    LayerCost per_layer;
    double layers = 0;           // layers a token passes through (all of them)
    double output_layer_s = 0;   // logits
    double pipeline_s = 0;       // sends between stages
    double time_s = 0;           // TTFT (prefill of one prompt) or TPOT (one decode step)
    // Time split by what bounds it: compute, weight loading, KV cache, network.
    double compute_s = 0, weights_s = 0, kv_s = 0, network_s = 0;
    Limit bound;                 // compute, weights, KV cache or the network
    bool matmuls_compute_bound = false;
};

struct ServingMemory {
    double weights_bytes = 0;
    double kv_cache_bytes = 0;
    double activations_bytes = 0;  // one prompt's prefill working set and the logits
    [[nodiscard]] double total_bytes() const { return weights_bytes + kv_cache_bytes + activations_bytes; }
};

struct MoeDecode {
    double experts = 0, top_k = 0;
    double tokens_per_group = 0;          // tokens one expert-parallel group routes per step
    double experts_touched_per_layer = 0; // expected distinct experts those tokens reach
    double experts_touched_per_chip = 0;
    double expert_bytes_per_chip = 0;     // expert weights read per layer per chip
};

struct ServingReport {
    PhaseCost prefill;       // one prompt: time to first token
    PhaseCost decode;        // one step (verifying the drafts, and drafting, when speculative)
    double decode_tokens_per_step = 1;  // per sequence: 1 unless speculative
    double draft_s = 0;                 // of a step, in the prediction modules
    [[nodiscard]] double tpot_s() const { return decode.time_s / decode_tokens_per_step; }
    double prefill_batch_s = 0;  // the replica's whole batch of prompts prefilled together
    double decode_tokens_per_s = 0;   // decode only, whole deployment
    double output_tokens_per_s = 0;   // with each batch's prefill in the same chips' time
    double output_tokens_per_s_per_chip = 0;
    double tokens_per_s_per_user = 0; // 1 / TPOT
    double requests_per_s = 0;
    double kv_cache_bytes_per_token = 0;  // whole model, at the KV dtype
    double kv_cache_bytes_per_sequence = 0;  // whole model at the full context (prompt and output), windows counted
    double kv_tokens_freed_per_step = 0;
    ServingMemory memory;        // per chip
    double hbm_bytes = 0;
    bool fits = true;
    double overflow_bytes = 0;
    std::string overflow;        // what does not fit, in words
    double max_batch_seqs = 0;   // whole deployment, at this context and these dtypes
    std::optional<double> cost_per_million_output_tokens_usd;
    std::optional<MoeDecode> moe;
};

// InputError naming the flag (--tp, --pp, --ep, --dp, --batch, --weights-dtype, --kv-dtype)
// when the plan does not divide the model, or the chip lacks a dtype's arithmetic.
void check_serving_plan(const ModelSpec& model, const ChipSpec& chip, const Plan& plan, double batch_seqs);

// The deployment's axes (data, expert, tensor, pipeline) laid on its cluster.
[[nodiscard]] Mesh place_serving_plan(const Cluster& cluster, const Plan& plan);

[[nodiscard]] ServingReport simulate_serving(const ServingScenario& scenario);

// The share of a batch's life (its prefill, then each decode step) the chips spend in kernels
// rather than waiting on the network: what their power follows.
[[nodiscard]] double serving_kernel_share(const ServingReport& report, double output_len);

// Prices one iteration of a continuous-batching server (vLLM, SGLang) on one replica without
// pipeline stages: the GEMMs and collectives of every token in the pass, the decodes' attention over
// their caches, each prompt chunk's attention over its prompt so far, and logits for the rows that
// yield a token. Each part is the layer model above (ChipModel), memoised by its integer shape.
struct PromptChunk {
    std::int64_t tokens = 0;
    std::int64_t offset = 0;  // prompt tokens already in the cache
};
struct StepShape {
    std::int64_t decode_seqs = 0;  // sequences decoding one token each
    double decode_keys = 0;        // cached tokens their queries read, summed over them
    std::vector<PromptChunk> chunks;
    std::int64_t logit_rows = 0;   // decodes and prompts whose last chunk this is
};
class StepPricer {
public:
    explicit StepPricer(const ServingScenario& scenario);
    ~StepPricer();
    StepPricer(const StepPricer&) = delete;
    StepPricer& operator=(const StepPricer&) = delete;
    [[nodiscard]] double step_s(const StepShape& step);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The latency-throughput curve: decode at each batch size (whole deployment), and the smallest
// batch at which the decode matmuls turn compute-bound (0 when none of them does).
struct CurvePoint {
    double batch_seqs = 0;
    double tpot_s = 0;
    double ttft_s = 0;
    double output_tokens_per_s = 0;
    double output_tokens_per_s_per_chip = 0;
    double tokens_per_s_per_user = 0;
    Limit bound;
    bool matmuls_compute_bound = false;
    bool fits = true;
};
struct ServingCurve {
    std::vector<CurvePoint> points;
    double critical_batch_seqs = 0;
};
[[nodiscard]] ServingCurve serving_curve(ServingScenario scenario, const std::vector<double>& batches);

// Disaggregated serving of `requests_per_s`: prefill replicas and decode replicas of the same plan.
struct Disaggregation {
    double requests_per_s = 0;
    double prefill_per_decode = 0;  // prefill replicas per decode replica (fractional)
    std::int64_t prefill_replicas = 0, decode_replicas = 0;
    std::int64_t prefill_chips = 0, decode_chips = 0;
    [[nodiscard]] std::int64_t chips() const { return prefill_chips + decode_chips; }
};
[[nodiscard]] Disaggregation disaggregate(const ServingScenario& scenario, const ServingReport& report,
                                          double requests_per_s);

}  // namespace ridgeline
