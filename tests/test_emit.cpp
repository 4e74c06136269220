// --emit: plans written as a framework's launch configuration. The expected flags and values are
// worked by hand from the plan (layers / (pp x vpp), chips / (tp x pp), batch tokens / sequence
// length ...) and the framework's own argument names, not taken from an earlier run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io/json_reader.hpp"
#include "test_support.hpp"

namespace {

using ridgeline::test::expect_refusal;
using ridgeline::test::run_ridgeline;

// The setting lines of an emitted configuration (comments left out, continuations stripped).
std::vector<std::string> setting_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        if (line.size() >= 2 && line.substr(line.size() - 2) == " \\") line.resize(line.size() - 2);
        lines.push_back(line);
    }
    return lines;
}

// Every key the framework's data file names (a setting's key, or a key inside its choices), each
// with a non-empty source.
std::set<std::string> keys_with_source(const std::string& framework) {
    const nlohmann::json file = ridgeline::io::parse_json_file(ridgeline::test::source_dir() / "emitters" / (framework + ".json"));
    std::set<std::string> keys;
    for (const auto& [id, setting] : file.at("settings").items()) {
        REQUIRE_FALSE(setting.at("source").get<std::string>().empty());
        if (setting.contains("key")) keys.insert(setting.at("key").get<std::string>());
        if (setting.contains("choices"))
            for (const auto& [value, entries] : setting.at("choices").items())
                for (const auto& [key, v] : entries.items()) keys.insert(key);
    }
    REQUIRE_FALSE(file.at("checked_against").empty());
    return keys;
}

// Each emitted line's flag or key is one the data file names with its source (a TOML key is its
// [section] and name joined by '.').
enum class Syntax { arguments, yaml, toml };
void check_names_in_data(const std::vector<std::string>& lines, const std::string& framework, Syntax syntax) {
    const std::set<std::string> keys = keys_with_source(framework);
    std::string section;
    for (const std::string& line : lines) {
        if (syntax == Syntax::toml && line.front() == '[') {
            section = line.substr(1, line.size() - 2) + ".";
            continue;
        }
        const std::string key = syntax == Syntax::yaml   ? line.substr(0, line.find(':'))
                                : syntax == Syntax::toml ? section + line.substr(0, line.find(' '))
                                                         : line.substr(0, line.find(' '));
        CAPTURE(line);
        CHECK(keys.count(key) == 1);
    }
}

// A command that must succeed; its output.
ridgeline::test::CommandResult emitted(const std::string& arguments) {
    const auto result = run_ridgeline(arguments);
    CAPTURE(result.err);
    REQUIRE(result.exit_code == 0);
    return result;
}

}  // namespace

TEST_CASE("emit megatron: llama3-70b on 64 H100s, tp 8 pp 2 vpp 4 dp 4, sequence parallel, selective recompute") {
    const auto result = emitted(
        "train --model llama3-70b --hardware dgx-h100 --chips 64 --tp 8 --pp 2 --vpp 4 --sp --recompute selective "
        "--global-batch-tokens 4194304 --emit megatron");
    // 80 layers / (2 stages x 4 virtual) = 10 per virtual stage; 4194304 / 8192 = 512 sequences;
    // micro-batch 1 with pipelining; ZeRO-1 by default = the distributed optimizer; dp 4 > 1: overlap.
    // The shape is models/llama3-70b.json's (Meta's config.json): 8192 wide, FFN 28672, 64 heads in
    // 8 KV groups of 128, SwiGLU, RMSNorm, RoPE, untied embeddings, no linear biases.
    const std::vector<std::string> expected = {
        "--num-layers 80",
        "--hidden-size 8192", "--ffn-hidden-size 28672", "--num-attention-heads 64", "--group-query-attention", "--num-query-groups 8",
        "--kv-channels 128", "--max-position-embeddings 8192", "--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear",
        "--normalization RMSNorm", "--position-embedding-type rope",
        "--seq-length 8192", "--tensor-model-parallel-size 8", "--pipeline-model-parallel-size 2",
        "--num-layers-per-virtual-pipeline-stage 10", "--sequence-parallel", "--micro-batch-size 1", "--global-batch-size 512",
        "--recompute-granularity selective", "--recompute-modules core_attn", "--use-distributed-optimizer", "--overlap-grad-reduce",
        "--overlap-param-gather", "--bf16"};
    const auto lines = setting_lines(result.out);
    CHECK(lines == expected);
    check_names_in_data(lines, "megatron", Syntax::arguments);
    // The header names the model, the hardware, Ridgeline's version and the predicted figures.
    CHECK(result.out.find("# Megatron-Core configuration written by ridgeline ") == 0);
    CHECK(result.out.find("llama3-70b on 64 x h100-sxm (dgx-h100)") != std::string::npos);
    CHECK(result.out.find("predicted: step ") != std::string::npos);
    CHECK(result.out.find("MFU ") != std::string::npos);
    CHECK(result.out.find("names checked against Megatron-Core 0.20.0") != std::string::npos);
}

TEST_CASE("emit megatron: an uneven split gives the first and last stages their own layers") {
    const auto result = emitted(
        "train --model llama3-70b --hardware dgx-h100 --chips 64 --tp 8 --pp 8 --stage-layers 9,10,10,10,10,10,10,11 --emit megatron");
    const auto lines = setting_lines(result.out);
    // 9 + 6 x 10 + 11 = 80; dp = 64 / (8 x 8) = 1: nothing to overlap; the default batch is a sequence per chip.
    const std::vector<std::string> expected = {
        "--num-layers 80",
        "--hidden-size 8192", "--ffn-hidden-size 28672", "--num-attention-heads 64", "--group-query-attention", "--num-query-groups 8",
        "--kv-channels 128", "--max-position-embeddings 8192", "--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear",
        "--normalization RMSNorm", "--position-embedding-type rope",
        "--seq-length 8192", "--tensor-model-parallel-size 8", "--pipeline-model-parallel-size 8",
        "--decoder-first-pipeline-num-layers 9", "--decoder-last-pipeline-num-layers 11", "--micro-batch-size 1",
        "--global-batch-size 64", "--use-distributed-optimizer", "--bf16"};
    CHECK(lines == expected);
    check_names_in_data(lines, "megatron", Syntax::arguments);
}

TEST_CASE("emit megatron: expert ranks folded over tensor 4 and two of four context ranks, as the ModelZoo's 64k run") {
    const auto result = emitted(
        "train --model qwen3-235b-a22b --hardware dgx-h100 --chips 256 --seq-len 65536 --global-batch-seqs 256 --tp 4 --cp 4 "
        "--pp 8 --ep 8 --etp 1 --fold-experts --sp --stage-layers 11,12,12,12,12,12,12,11 --moe-dispatcher deepep --emit megatron");
    const auto lines = setting_lines(result.out);
    // Megatron-Core is told the degrees; the split of the context axis is its own rank order.
    for (const char* line : {"--tensor-model-parallel-size 4", "--context-parallel-size 4", "--expert-model-parallel-size 8",
                             "--expert-tensor-parallel-size 1", "--pipeline-model-parallel-size 8"})
        CHECK(std::find(lines.begin(), lines.end(), line) != lines.end());
    check_names_in_data(lines, "megatron", Syntax::arguments);
}

TEST_CASE("emit maxtext: llama3-70b on a 512-chip TPU v5p slice, fsdp 64 x tensor 8, full remat") {
    const auto result = emitted(
        "train --model llama3-70b --hardware tpu-v5p --chips 512 --global-batch-tokens 4194304 --fsdp 64 --tp 8 --recompute full "
        "--emit maxtext");
    // The shape is Meta's Llama 3 70B config.json in base.yml's keys (model_name stays "default").
    // One slice: every axis on ICI. 512 sequences over 512 chips: one per device.
    const std::vector<std::string> expected = {
        "base_num_decoder_layers: 80", "base_emb_dim: 8192", "base_mlp_dim: 28672", "base_num_query_heads: 64",
        "base_num_kv_heads: 8", "head_dim: 128", "vocab_size: 128256", "max_target_length: 8192", "per_device_batch_size: 1",
        "ici_data_parallelism: 1", "dcn_data_parallelism: 1", "ici_fsdp_parallelism: 64", "dcn_fsdp_parallelism: 1",
        "ici_expert_parallelism: 1", "dcn_expert_parallelism: 1", "ici_tensor_parallelism: 8", "dcn_tensor_parallelism: 1",
        "ici_context_parallelism: 1", "dcn_context_parallelism: 1", "ici_pipeline_parallelism: 1", "dcn_pipeline_parallelism: 1",
        "remat_policy: \"full\"", "dtype: \"bfloat16\"", "quantization: \"\""};
    const auto lines = setting_lines(result.out);
    CHECK(lines == expected);
    check_names_in_data(lines, "maxtext", Syntax::yaml);
    CHECK(result.out.find("tpu-v5p") != std::string::npos);
    // MaxText reads its configuration with PyYAML (through OmegaConf): the file parses there to the same values.
    const auto path = ridgeline::test::scratch_dir("emit") / "fsdp_tp.yml";
    std::ofstream(path) << result.out;
    const std::string check = "/usr/bin/python3 -c \"import sys, yaml; c = yaml.safe_load(open(sys.argv[1])); "
                              "sys.exit(0 if (c['ici_fsdp_parallelism'], c['ici_tensor_parallelism'], c['per_device_batch_size'], c['remat_policy'], "
                              "c['quantization']) == (64, 8, 1, 'full', '') else 1)\" " + path.string();
    CHECK(std::system(check.c_str()) == 0);
}

TEST_CASE("emit maxtext: data parallelism across two slices goes to DCN") {
    const auto result = emitted(
        "train --model llama3-8b --hardware tpu-v5p --chips 512 --nodes 2 --tp 8 --recompute full --global-batch-tokens 4194304 "
        "--emit maxtext");
    const auto lines = setting_lines(result.out);
    // dp = 512 / 8 = 64 replicas: 256 / 8 = 32 in each slice, over the 2 slices.
    CHECK(std::count(lines.begin(), lines.end(), "ici_tensor_parallelism: 8") == 1);
    CHECK(std::count(lines.begin(), lines.end(), "ici_data_parallelism: 32") == 1);
    CHECK(std::count(lines.begin(), lines.end(), "dcn_data_parallelism: 2") == 1);
    CHECK(std::count(lines.begin(), lines.end(), "ici_fsdp_parallelism: 1") == 1);
    CHECK(std::count(lines.begin(), lines.end(), "shard_optimizer_over_data: true") == 1);  // ZeRO-1 over data
}

TEST_CASE("emit vllm: llama3-70b on 8 H100s, tp 4 x 2 replicas, fp8 KV cache") {
    const auto result = emitted(
        "serve --model llama3-70b --hardware dgx-h100 --chips 8 --tp 4 --batch 64 --input-len 2048 --output-len 512 --kv-dtype fp8 "
        "--emit vllm");
    // 8 / 4 = 2 replicas; 64 / 2 = 32 sequences each; 2048 + 512 = 2560 context; a step holds one
    // 2048-token prompt (more than the 32 decode tokens).
    const std::vector<std::string> expected = {
        "--tensor-parallel-size 4", "--pipeline-parallel-size 1", "--data-parallel-size 2", "--max-num-seqs 32",
        "--max-num-batched-tokens 2048", "--max-model-len 2560", "--kv-cache-dtype fp8", "--dtype bfloat16"};
    const auto lines = setting_lines(result.out);
    CHECK(lines == expected);
    check_names_in_data(lines, "vllm", Syntax::arguments);
    CHECK(result.out.find("predicted: TTFT ") != std::string::npos);
    CHECK(result.out.find("TPOT ") != std::string::npos);
}

TEST_CASE("emit torchtitan: llama3.1-70b on 64 H100s, FSDP 8 x TP 8, full recompute, a TOML file Python's tomllib reads") {
    const auto result = emitted(
        "train --model llama3.1-70b --hardware dgx-h100 --chips 64 --fsdp 8 --tp 8 --sp --recompute full --stack torchtitan --emit torchtitan");
    // 64 / 8 = 8 data-parallel ranks, all sharded (dp_shard 8, no replicas); the default batch of a
    // sequence per chip is 64, 8 per rank, no accumulation; bf16: no converters; the torchtitan
    // stack compiles.
    const std::vector<std::string> expected = {
        "[model]", "flavor = \"70B\"", "name = \"llama3\"", "converters = []",
        "[training]", "seq_len = 8192", "local_batch_size = 8", "global_batch_size = 64",
        "[parallelism]", "data_parallel_replicate_degree = 1", "data_parallel_shard_degree = 8", "fsdp_reshard_after_forward = \"always\"",
        "tensor_parallel_degree = 8", "context_parallel_degree = 1", "pipeline_parallel_degree = 1",
        "[activation_checkpoint]", "mode = \"full\"", "[compile]", "enable = true"};
    const auto lines = setting_lines(result.out);
    CHECK(lines == expected);
    check_names_in_data(lines, "torchtitan", Syntax::toml);
    CHECK(result.out.find("names checked against torchtitan v0.2.2") != std::string::npos);
    // torchtitan reads its job file with Python's tomllib: the file parses there to the same values.
    const auto path = ridgeline::test::scratch_dir("emit") / "fsdp_tp.toml";
    std::ofstream(path) << result.out;
    const std::string check = "/usr/bin/python3 -c \"import sys, tomllib; c = tomllib.load(open(sys.argv[1], 'rb')); p = c['parallelism']; "
                              "sys.exit(0 if (p['data_parallel_shard_degree'], p['tensor_parallel_degree'], c['training']['local_batch_size'], "
                              "c['model']['converters'], c['compile']['enable']) == (8, 8, 8, [], True) else 1)\" " + path.string();
    CHECK(std::system(check.c_str()) == 0);
}

TEST_CASE("emit torchtitan: interleaved stages and an uneven split as torchtitan weighs the embedding and the output") {
    const std::string base = "train --model llama3.1-70b --hardware dgx-h100 --chips 64 --tp 8 --sp --fsdp 2 --recompute torchtitan-op --stack torchtitan ";
    const auto interleaved = setting_lines(emitted(base + "--pp 4 --vpp 2 --emit torchtitan").out);
    // 80 layers over 4 ranks x 2 stages: 10 a stage, no weight for the embedding or the output; the
    // default batch of 64 sequences over 64 / (8 x 4) = 2 data-parallel ranks: 32 per rank, in
    // micro-batches of 1.
    for (const char* line : {"pipeline_parallel_schedule = \"Interleaved1F1B\"", "pipeline_parallel_layers_per_stage = 10",
                             "pipeline_parallel_first_stage_less_layers = 0", "pipeline_parallel_last_stage_less_layers = 0",
                             "pipeline_parallel_microbatch_size = 1", "local_batch_size = 32", "mode = \"selective\"", "selective_ac_option = \"op\""})
        CHECK(std::count(interleaved.begin(), interleaved.end(), line) == 1);
    // 20, 21, 20, 19 is torchtitan's default split of 80 layers over 4 stages: the embedding and
    // the output weigh a layer each, 82 / 4 = 20 rest 2 on the first two stages: 21-1, 21, 20, 20-1.
    const auto uneven = setting_lines(emitted(base + "--pp 4 --stage-layers 20,21,20,19 --emit torchtitan").out);
    for (const char* line : {"pipeline_parallel_schedule = \"1F1B\"", "pipeline_parallel_layers_per_stage = 21",
                             "pipeline_parallel_first_stage_less_layers = 1", "pipeline_parallel_last_stage_less_layers = 1"})
        CHECK(std::count(uneven.begin(), uneven.end(), line) == 1);
}

TEST_CASE("emit trtllm: llama3-70b on 8 H100s, tp 4 x 2 replicas, fp8 KV cache: one server a replica") {
    const auto result = emitted(
        "serve --model llama3-70b --hardware dgx-h100 --chips 8 --tp 4 --batch 64 --input-len 2048 --output-len 512 --kv-dtype fp8 "
        "--emit trtllm");
    // 64 sequences over 2 replicas: 32 each; a step holds one 2048-token prompt; 2048 + 512 = 2560.
    const std::vector<std::string> expected = {"--tp_size 4", "--pp_size 1", "--max_batch_size 32", "--max_num_tokens 2048", "--max_seq_len 2560",
                                               "--kv_cache_dtype fp8"};
    const auto lines = setting_lines(result.out);
    CHECK(lines == expected);
    check_names_in_data(lines, "trtllm", Syntax::arguments);
    CHECK(result.out.find("run 2 such servers") != std::string::npos);
}

TEST_CASE("emit sglang: llama3-70b on 8 H100s, tp 4 x 2 replicas, fp8 KV cache: two copies of one tp group") {
    const auto result = emitted(
        "serve --model llama3-70b --hardware dgx-h100 --chips 8 --tp 4 --batch 64 --input-len 2048 --output-len 512 --kv-dtype fp8 "
        "--emit sglang");
    // Without data-parallel attention SGLang's limits count one replica: 64 / 2 = 32 sequences; a
    // step holds one 2048-token prompt; 2048 + 512 = 2560 tokens of context.
    const std::vector<std::string> expected = {"--tp-size 4", "--pp-size 1", "--dp-size 2", "--max-running-requests 32", "--chunked-prefill-size 2048",
                                               "--context-length 2560", "--kv-cache-dtype fp8_e4m3", "--dtype bfloat16"};
    const auto lines = setting_lines(result.out);
    CHECK(lines == expected);
    check_names_in_data(lines, "sglang", Syntax::arguments);
    CHECK(result.out.find("runs that many copies") != std::string::npos);
}

TEST_CASE("emit sglang: experts over the replicas are SGLang's data-parallel attention, one server over every GPU") {
    const auto result = emitted(
        "serve --model qwen3-30b-a3b --hardware dgx-h100 --chips 8 --tp 2 --dp 4 --ep 4 --batch 64 --input-len 1024 --output-len 256 "
        "--weights-dtype fp8 --emit sglang");
    // One server of 2 x 4 = 8 ranks, attention in 4 groups of 2, experts over all 8. SGLang divides
    // its per-server limits by the 4 groups: 16 sequences a group x 4 = 64, and a 1024-token prompt
    // a group x 4 = 4096; fp8 weights are quantised from bf16 on loading.
    const std::vector<std::string> expected = {"--tp-size 8", "--pp-size 1", "--dp-size 4", "--enable-dp-attention", "--ep-size 8",
                                               "--max-running-requests 64", "--chunked-prefill-size 4096", "--context-length 1280",
                                               "--kv-cache-dtype bf16", "--dtype bfloat16", "--quantization fp8"};
    const auto lines = setting_lines(result.out);
    CHECK(lines == expected);
    check_names_in_data(lines, "sglang", Syntax::arguments);
}

TEST_CASE("emit from the searches: search train --emit-top 2 writes the two best plans") {
    const auto result = emitted(
        "search train --model llama3-8b --hardware dgx-h100 --chips 16 --global-batch-tokens 1048576 --fsdp 1 --emit megatron --emit-top 2");
    std::size_t configurations = 0;
    for (std::size_t at = result.out.find("written by ridgeline"); at != std::string::npos; at = result.out.find("written by ridgeline", at + 1))
        ++configurations;
    CHECK(configurations == 2);
    check_names_in_data(setting_lines(result.out), "megatron", Syntax::arguments);
}

TEST_CASE("emit from a search: plans the framework cannot run are passed over, and none at all is refused naming the knob") {
    // Tensor parallelism fixed at 2 with sequence parallelism off: torchtitan can run none of them.
    expect_refusal("search train --model llama3-8b --hardware dgx-h100 --chips 16 --global-batch-tokens 1048576 --tp 2 --sp off --emit torchtitan",
                   {"--emit", "sp", "none of the search's", "fix that knob"});
    // Free, the search's best torchtitan can run is written, in torchtitan's rank order.
    const auto result = emitted("search train --model llama3-8b --hardware dgx-h100 --chips 16 --global-batch-tokens 1048576 --stack torchtitan --emit torchtitan");
    CHECK(result.out.find("# torchtitan configuration written by ridgeline") != std::string::npos);
}

TEST_CASE("emit refuses what the framework cannot express, naming --emit and the knob") {
    const std::string h100 = "--model llama3-70b --hardware dgx-h100 --chips 64 --tp 8 ";
    expect_refusal("train " + h100 + "--pp 2 --schedule gpipe --emit megatron", {"--emit", "schedule", "gpipe"});
    expect_refusal("train " + h100 + "--pp 8 --stage-layers 9,11,10,10,10,10,10,10 --emit megatron", {"--emit", "stage_layers"});
    expect_refusal("train " + h100 + "--tp-overlap --emit megatron", {"--emit", "tp_overlap"});
    expect_refusal("train --model llama3-70b --hardware tpu-v5p --chips 512 --fsdp 64 --tp 8 --emit megatron", {"--emit", "hardware"});
    expect_refusal("train --model llama3-70b --hardware tpu-v5p --chips 512 --fsdp 64 --tp 8 --recompute none --emit maxtext",
                   {"--emit", "recompute", "none"});
    // ZeRO-3 shards gradients over the data replicas too; MaxText shards only the optimizer over data.
    expect_refusal("train --model llama3-8b --hardware tpu-v5p --chips 512 --nodes 2 --fsdp 256 --recompute full --emit maxtext",
                   {"--emit", "zero"});
    expect_refusal("serve --model llama3-8b --hardware dgx-h100 --input-len 128 --output-len 128 --kv-dtype int8 --emit vllm",
                   {"--emit", "kv_dtype", "int8"});
    expect_refusal("serve --model mixtral-8x7b --hardware dgx-h100 --chips 8 --tp 2 --ep 2 --batch 4 --input-len 128 --output-len 128 --emit vllm",
                   {"--emit", "ep"});
    // Training and serving frameworks do not cross; a configuration and a report are not both printed.
    expect_refusal("train " + h100 + "--emit vllm", {"--emit", "vllm", "serving"});
    expect_refusal("serve --model llama3-8b --hardware dgx-h100 --input-len 128 --output-len 128 --emit megatron", {"--emit", "megatron", "training"});
    expect_refusal("serve --model llama3-8b --hardware dgx-h100 --input-len 128 --output-len 128 --emit vllm --json", {"--emit", "--json"});
    expect_refusal("train " + h100 + "--emit nemo-x", {"--emit", "nemo-x", "megatron"});
    // torchtitan: optimizer sharding without FSDP2, tensor parallelism without its sequence
    // parallelism, DeepSeek's DualPipe (torchtitan runs DualPipeV), a TPU.
    expect_refusal("train " + h100 + "--sp --emit torchtitan", {"--emit", "zero", "--fsdp"});
    expect_refusal("train " + h100 + "--fsdp 8 --emit torchtitan", {"--emit", "sp"});
    expect_refusal("train " + h100 + "--sp --fsdp 4 --pp 2 --schedule dualpipe --emit torchtitan", {"--emit", "schedule", "dualpipe"});
    expect_refusal("train --model llama3-70b --hardware tpu-v5p --chips 512 --fsdp 64 --tp 8 --emit torchtitan", {"--emit", "hardware"});
    expect_refusal("serve --model mixtral-8x7b --hardware dgx-h100 --chips 8 --tp 2 --ep 2 --batch 4 --input-len 128 --output-len 128 --emit trtllm",
                   {"--emit", "ep"});
    // SGLang: experts over some of the replicas only, an int8 cache, int4 weights it would have to quantise itself.
    expect_refusal("serve --model mixtral-8x7b --hardware dgx-h100 --chips 8 --tp 2 --ep 2 --batch 4 --input-len 128 --output-len 128 --emit sglang",
                   {"--emit", "ep", "--dp 2"});
    expect_refusal("serve --model llama3-8b --hardware dgx-h100 --input-len 128 --output-len 128 --kv-dtype int8 --emit sglang",
                   {"--emit", "kv_dtype", "int8"});
    expect_refusal("serve --model llama3-8b --hardware dgx-h100 --input-len 128 --output-len 128 --weights-dtype int4 --emit sglang",
                   {"--emit", "weights_dtype", "int4"});
}
