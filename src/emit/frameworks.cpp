#include "emit/frameworks.hpp"

namespace ridgeline {

namespace {

const std::vector<EmitFramework>& frameworks() {
    static const std::vector<EmitFramework> kFrameworks = {
        {"megatron", EmitJob::training,
         {"layers", "d_model", "d_ff", "heads", "gqa", "kv_groups", "head_dim", "max_positions", "experts", "top_k", "d_ff_expert", "swiglu",
          "untie", "no_linear_bias", "normalization", "position_embedding", "seq_len", "tp", "pp", "vpp_layers", "vpp", "first_stage_layers", "last_stage_layers", "embedding_in_split", "loss_in_split", "cp", "ep", "etp", "sp",
          "micro_batch", "global_batch", "recompute", "zero", "overlap_grad_reduce", "overlap_param_gather", "tp_overlap", "precision",
          "schedule", "moe_dispatcher", "ep_overlap", "mtp_depth", "offload_optimizer"},
         {"tensor", "context", "expert", "fsdp", "data", "pipeline"}},
        {"maxtext", EmitJob::training,
         {"layers", "d_model", "d_ff", "heads", "kv_heads", "head_dim", "vocab", "experts", "top_k", "d_ff_expert", "seq_len",
          "per_device_batch", "gradient_accumulation", "ici.data", "dcn.data", "ici.fsdp", "dcn.fsdp", "ici.expert",
          "dcn.expert", "ici.tensor", "dcn.tensor", "ici.context", "dcn.context", "ici.pipeline", "dcn.pipeline", "stage_layers",
          "pipeline_repeats", "pipeline_microbatches", "schedule", "recompute", "zero_over_data", "precision", "offload_optimizer"}},
        {"torchtitan", EmitJob::training,
         {"model", "seq_len", "local_batch", "global_batch", "cpu_offload", "dp_replicate", "dp_shard", "reshard", "tp", "async_tp", "pp",
          "layers_per_stage", "first_stage_less_layers", "last_stage_less_layers", "pp_microbatch", "schedule", "cp", "ep", "etp",
          "moe_dispatcher", "recompute", "precision", "compile", "compile_components"},
         {"tensor", "context", "expert", "fsdp", "data", "pipeline"}},
        {"vllm", EmitJob::serving,
         {"tp", "pp", "dp", "expert_parallel", "max_batch", "max_tokens", "max_model_len", "kv_dtype", "weights_dtype"}},
        {"trtllm", EmitJob::serving, {"tp", "pp", "ep", "max_batch", "max_tokens", "max_seq_len", "kv_dtype", "weights_dtype"}},
        {"sglang", EmitJob::serving,
         {"tp", "pp", "dp", "dp_attention", "ep", "max_batch", "max_tokens", "context_length", "kv_dtype", "weights_dtype"}},
    };
    return kFrameworks;
}

}  // namespace

const EmitFramework* find_emit_framework(const std::string& name) {
    for (const EmitFramework& f : frameworks())
        if (name == f.name) return &f;
    return nullptr;
}

std::string emit_framework_names(EmitJob job) {
    std::string names;
    for (const EmitFramework& f : frameworks())
        if (f.job == job) names += (names.empty() ? "" : ", ") + std::string(f.name);
    return names;
}

}  // namespace ridgeline
