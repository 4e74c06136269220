#pragma once
// Published measurements in the run-record format (ridgeline.run-record/1, see
// tests/data/RUN-RECORD.md): what ran, on what, with which plan, and what was measured.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.hpp"
#include "spec/plan.hpp"

namespace ridgeline {

struct RunRecordMoe {
    std::int64_t experts = 0, top_k = 0, d_ff_expert = 0, shared_experts = 0, dense_layers = 0, layer_freq = 1;
};

struct RunRecord : Degrees {
    std::string id, kind, source_key, source_title, reliability;
    // model
    std::string model_name, attention;
    std::optional<MlaSpec> mla;  // attention "mla": its low-rank shapes, where the record gives them
    std::int64_t layers = 0, d_model = 0, heads = 0, kv_heads = 0, head_dim = 0, d_ff = 0, vocab = 0;
    bool gated_mlp = true;
    bool learned_positions = false;  // learned absolute position embeddings, no rotary (MPT's default)
    std::optional<bool> tied_embeddings;
    std::optional<RunRecordMoe> moe;
    // hardware
    std::string accelerator;
    std::int64_t count = 0;
    std::optional<std::int64_t> devices_per_node, nvlink_domain, num_slices;
    std::optional<double> scale_out_Bps_per_device;
    std::optional<std::string> tpu_slice;
    // workload
    std::int64_t seq_len = 0;
    std::optional<std::int64_t> global_batch_seqs, global_batch_tokens, micro_batch_seqs;
    std::optional<std::int64_t> input_len, output_len, concurrency;
    // plan
    std::optional<std::int64_t> etp, vpp;
    bool sequence_parallel = false;
    int zero = 0;
    std::string recompute = "none";
    std::optional<bool> comm_overlap;
    std::optional<std::string> moe_dispatcher;   // this project's extension: alltoall or deepep
    std::optional<bool> expert_comm_overlap;     // this project's extension
    std::optional<std::string> kv_cache_dtype;   // this project's extension, serving: bf16 or fp8 (absent: as precision)
    std::optional<std::string> attention_weights_dtype;  // this project's extension, serving: bf16 (absent: as precision)
    std::optional<std::string> gradient_reduce_dtype;    // this project's extension: fp32 or bf16 (absent: the stack's)
    std::vector<std::string> recompute_modules;  // this project's extension: Megatron-Core's names
    std::optional<std::string> recompute_policy; // this project's extension: a policy in recompute/ the source's script names
    bool pipeline_interleaved = false;           // this project's extension: interleaved, depth not stated (vpp null)
    std::string precision = "bf16";
    // measured
    std::optional<double> tokens_per_s, step_time_s, mfu, tflops_per_device, peak_memory_bytes, output_tokens_per_s;
    // Serving under load (this project's extension): a latency and the statistic the source gives of it.
    struct Latency {
        double value_s = 0;
        std::string statistic;  // mean, p50, p90 or p99 over the run's requests (tokens, for ITL)
    };
    std::optional<Latency> ttft_s, itl_s;  // time to first token; inter-token latency
    std::string flops_accounting;
    std::string framework, framework_version;  // software that ran (empty: not stated)
    std::vector<std::string> assumed;
};

// Refuses a file whose schema is not ridgeline.run-record/1, and any record with a missing or
// extra key, a wrong type, a null where none is allowed, or a broken invariant, naming the
// record id and the dotted field. A record's recompute_policy must name a policy in data_dir/recompute.
[[nodiscard]] std::vector<RunRecord> load_run_records(const std::filesystem::path& path, const std::filesystem::path& data_dir);

}  // namespace ridgeline
