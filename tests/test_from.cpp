// --from FRAMEWORK FILE: a plan read back from a launch configuration. Round trips (what --emit
// writes reads back to the same plan, so the same predicted step), a hand-written Megatron-LM
// arguments file whose degrees are worked by hand, and refusals naming the file and the key.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <utility>
#include <vector>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace {

using ridgeline::test::expect_refusal;
using ridgeline::test::run_ridgeline;

std::string write_file(const std::string& name, const std::string& text) {
    const auto path = ridgeline::test::scratch_dir("from") / name;
    std::ofstream(path) << text;
    return path.string();
}

// The "predicted: step ..." header line of an emitted configuration.
std::string predicted_line(const std::string& text) {
    const std::size_t at = text.find("predicted: step ");
    REQUIRE(at != std::string::npos);
    return text.substr(at, text.find('\n', at) - at);
}

// `train JOB --from FRAMEWORK FILE` reports exactly what `train JOB HAND_FLAGS` does, the flags
// worked by hand from the file.
void check_reads_as(const std::string& job, const std::string& framework, const std::string& file, const std::string& hand_flags) {
    const auto from = run_ridgeline("train " + job + " --from " + framework + " " + file + " --json");
    CAPTURE(from.err);
    REQUIRE(from.exit_code == 0);
    const auto direct = run_ridgeline("train " + job + " " + hand_flags + " --json");
    REQUIRE(direct.exit_code == 0);
    CHECK(from.out == direct.out);
}

// `train ARGS --emit F` written to a file, then `train --from F FILE BASE --emit F` predicts the
// same step and writes the same settings.
void check_round_trip(const std::string& base, const std::string& plan, const std::string& framework, const std::string& file_name) {
    const auto emitted = run_ridgeline("train " + base + " " + plan + " --emit " + framework);
    CAPTURE(emitted.err);
    REQUIRE(emitted.exit_code == 0);
    const std::string file = write_file(file_name, emitted.out);
    const auto read = run_ridgeline("train " + base + " --from " + framework + " " + file + " --emit " + framework);
    CAPTURE(read.err);
    REQUIRE(read.exit_code == 0);
    CHECK(predicted_line(read.out) == predicted_line(emitted.out));
    CHECK(read.out == emitted.out);
}

}  // namespace

TEST_CASE("from megatron: --emit megatron reads back to the same plan (vpp, sp, selective recompute)") {
    check_round_trip("--model llama3-70b --hardware dgx-h100 --chips 64",
                     "--tp 8 --pp 2 --vpp 4 --sp --recompute selective --global-batch-tokens 4194304", "megatron", "vpp_sp.args");
}

TEST_CASE("from megatron: full recompute, context parallelism and the distributed optimizer read back") {
    check_round_trip("--model llama3-8b --hardware dgx-h100 --chips 32", "--tp 2 --cp 2 --recompute full --micro-batch 2 --global-batch-seqs 256",
                     "megatron", "cp_full.args");
}

// Megatron-Core's recompute_modules list (transformer_config.py) as a policy of its own: mlp
// recomputes the up-projection and the activation beside core attention, as Megatron-FSDP's
// DeepSeek-V3 example asks (--recompute-modules mlp moe mla_up_proj layernorm).
TEST_CASE("from megatron: a recompute module list no choice names reads back as Megatron-Core's modules") {
    const std::string base = "--model llama3-8b --hardware dgx-h100 --chips 8";
    const std::string plan = "--tp 8 --sp --global-batch-seqs 16";
    check_round_trip(base, plan + " --recompute \"megatron-core: core_attn mlp\"", "megatron", "modules.args");
    const auto emitted = run_ridgeline("train " + base + " " + plan + " --recompute \"megatron-core: layernorm core_attn mlp\" --emit megatron");
    REQUIRE(emitted.exit_code == 0);
    CHECK(emitted.out.find("--recompute-granularity selective \\\n--recompute-modules layernorm core_attn mlp") != std::string::npos);
    // Recomputing more frees activation memory: core_attn alone keeps the MLP's inputs, which mlp drops.
    const auto memory = [&](const std::string& recompute) {
        const auto r = run_ridgeline("train " + base + " " + plan + " --recompute " + recompute + " --json");
        REQUIRE(r.exit_code == 0);
        return nlohmann::json::parse(r.out)["memory"]["activations_bytes"].get<double>();
    };
    CHECK(memory("\"megatron-core: core_attn mlp\"") < memory("selective"));
    CHECK(memory("\"megatron-core: core_attn\"") == memory("selective"));
    expect_refusal("train " + base + " --recompute \"megatron-core: core_attn warp\"", {"--recompute", "warp", "core_attn, layernorm"});
}

TEST_CASE("from megatron: a hand-written launch script gives the degrees worked by hand") {
    // 128 GPUs, tp 4 x pp 4 -> dp 8; 32 layers / (4 stages x 2 layers each) = 4 virtual stages;
    // micro 1, global 256 -> 256 / (1 x 8) = 32 micro-batches.
    const std::string file = write_file("launch.args",
                                        "# pretrain llama3-8b, 16 nodes\n"
                                        "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 \\\n"
                                        "  --seq-length 8192 --max-position-embeddings 8192   # context\n"
                                        "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 4\n"
                                        "--num-layers-per-virtual-pipeline-stage 2\n"
                                        "--sequence-parallel\n"
                                        "--micro-batch-size 1 --global-batch-size 256\n"
                                        "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather\n"
                                        "--recompute-granularity selective\n"
                                        "--bf16 --lr 3e-4 --min-lr 3e-5 --seed 1234 --save /ckpt --load /ckpt --log-interval 1\n");
    check_reads_as("--model llama3-8b --hardware dgx-h100 --chips 128", "megatron", file,
                   "--tp 4 --pp 4 --vpp 4 --sp --micro-batch 1 --global-batch-seqs 256 --zero 1 --recompute selective");
    // A flag on the command line overrides the file.
    const auto override_tp = run_ridgeline("train --model llama3-8b --hardware dgx-h100 --chips 128 --from megatron " + file + " --tp 2 --emit megatron");
    CAPTURE(override_tp.err);
    REQUIRE(override_tp.exit_code == 0);
    CHECK(override_tp.out.find("--tensor-model-parallel-size 2") != std::string::npos);
}

TEST_CASE("from megatron: --account-for-embedding/loss-in-pipeline-split and --recompute-activations read as Megatron-LM reads them") {
    // 32 layers + the embedding = 33 slots over pp 3: 11 a stage, the first holding 10 transformer
    // layers; + the loss as well = 34 over pp 2: 17 a stage, 16 transformer layers in each.
    // No --use-distributed-optimizer or --overlap-grad-reduce: ZeRO 0, no overlap; no batch sizes: the command line's.
    const std::string embedding = write_file("embedding.args", "--pipeline-model-parallel-size 3 --bf16 --account-for-embedding-in-pipeline-split\n");
    check_reads_as("--model llama3-8b --hardware dgx-h100 --chips 24", "megatron", embedding,
                   "--pp 3 --stage-layers 10,11,11 --zero 0 --overlap off");
    const std::string both = write_file("both.args",
                                        "--pipeline-model-parallel-size 2 --bf16 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split\n");
    check_reads_as("--model llama3-8b --hardware dgx-h100 --chips 16", "megatron", both,
                   "--pp 2 --zero 0 --overlap off");
    const std::string odd = write_file("odd.args", "--pipeline-model-parallel-size 4 --bf16 --account-for-embedding-in-pipeline-split\n");
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 32 --from megatron " + odd,
                   {odd, "--account-for-embedding-in-pipeline-split", "33", "pp 4"});
    // arguments.py: --recompute-activations sets --recompute-granularity selective (core_attn, the default modules).
    const std::string shorthand = write_file("shorthand.args", "--bf16 --recompute-activations\n");
    check_reads_as("--model llama3-8b --hardware dgx-h100 --chips 8", "megatron", shorthand,
                   "--recompute selective --zero 0 --overlap off");
}

TEST_CASE("from megatron: unknown, contradictory and malformed settings are refused naming the file and the key") {
    const std::string base = "train --model llama3-8b --hardware dgx-h100 --chips 64 --from megatron ";
    const std::string unknown = write_file("unknown.args", "--tensor-model-parallel-size 8 --use-magic-kernels\n");
    expect_refusal(base + unknown, {unknown, "--use-magic-kernels"});
    const std::string sizes = write_file("sizes.args", "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 3\n");
    expect_refusal(base + sizes, {sizes, "--tensor-model-parallel-size", "does not divide"});
    const std::string layers = write_file("layers.args", "--num-layers 40\n");
    expect_refusal(base + layers, {layers, "--num-layers", "contradict"});
    const std::string batch = write_file("batch.args", "--tensor-model-parallel-size 8 --micro-batch-size 2 --global-batch-size 20\n");
    expect_refusal(base + batch, {batch, "--global-batch-size"});
    const std::string recompute = write_file("recompute.args", "--recompute-granularity full --recompute-method block\n");
    expect_refusal(base + recompute, {recompute, "--recompute-"});
    const std::string command = write_file("command.args", "pretrain_gpt.py --tensor-model-parallel-size 8\n");
    expect_refusal(base + command, {command, "no launch command"});  // a command, not arguments: read as a script
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --from megatron " + sizes, {"--chips"});
    // The model's shape, where the file gives it, must be --model's.
    const std::string hidden = write_file("hidden.args", "--hidden-size 8192 --num-attention-heads 32\n");
    expect_refusal(base + hidden, {hidden, "--hidden-size", "8192", "4096"});
    const std::string groups = write_file("groups.args", "--group-query-attention --num-query-groups 4\n");
    expect_refusal(base + groups, {groups, "--num-query-groups", "8"});
    const std::string experts = write_file("experts.args", "--num-experts 8 --moe-router-topk 2\n");
    expect_refusal(base + experts, {experts, "--num-experts", "dense"});
    // Every setting it does not read, in one message.
    const std::string many = write_file("many.args", "--use-magic-kernels --tensor-model-parallel-size 8 --go-faster --warp-speed 9\n");
    expect_refusal(base + many, {many, "--use-magic-kernels", "--go-faster", "--warp-speed"});
}

TEST_CASE("from megatron: a repeated flag keeps its last value, as argparse does") {
    const std::string twice = write_file("twice.args", "--tensor-model-parallel-size 8\n--tensor-model-parallel-size 4\n");
    check_reads_as("--model llama3-8b --hardware dgx-h100 --chips 64", "megatron", twice, "--tp 4 --zero 0 --overlap off");
}

// Megatron-LM's own example scripts (tests/data/launch/SOURCES.md: commit, licence), read as
// published. Each plan below is worked by hand from the script.
std::string megatron_script(const std::string& name) {
    return (ridgeline::test::source_dir() / "tests" / "data" / "launch" / "megatron" / name).string();
}

TEST_CASE("from megatron: examples/llama's fp8 script: torchrun's 8 GPUs x 1 node, arrays, ${1:-...} defaults, an if on DTYPE") {
    // GPUS_PER_NODE=8, NUM_NODES=1 (torchrun --nproc_per_node --nnodes); TP_SIZE=1, CP_SIZE=1, the pp line
    // is commented out; micro 1, global 128, SEQ_LENGTH=8192; DTYPE="fp8" selects "--fp8-format hybrid"
    // (recipe: Megatron's default, delayed); --use-distributed-optimizer: ZeRO 1, grads and params overlapped.
    // --sequence-parallel at tp 1 is turned off, as Megatron's validate_args does.
    check_reads_as("--model llama3-8b --hardware dgx-h100", "megatron", megatron_script("train_llama3_8b_h100_fp8.sh"),
                   "--chips 8 --tp 1 --cp 1 --micro-batch 1 --global-batch-seqs 128 --seq-len 8192 --precision fp8 --zero 1");
}

TEST_CASE("from megatron: examples/megatron_fsdp's script: Megatron-FSDP optim_grads_params is ZeRO 3 over the 8 GPUs") {
    check_reads_as("--model llama3-8b --hardware dgx-h100", "megatron", megatron_script("train_llama3_8b_fsdp_h100_fp8.sh"),
                   "--chips 8 --fsdp 8 --micro-batch 1 --global-batch-seqs 128 --seq-len 8192 --precision fp8 --zero 3");
}

TEST_CASE("from megatron: examples/gpt3's 175B script: tp 8 x pp 16 does not fit the 8 GPUs it launches, --chips overrides") {
    const std::string file = megatron_script("train_gpt3_175b_distributed.sh");
    expect_refusal("train --model gpt3-175b --hardware dgx-h100 --from megatron " + file, {file, "does not divide the 8 GPUs the script launches"});
    // 1024 GPUs / (8 x 16) = dp 8; micro 1, global 1536, seq 2048, --fp16; no --overlap-grad-reduce.
    check_reads_as("--model gpt3-175b --hardware dgx-h100 --chips 1024", "megatron", file,
                   "--tp 8 --pp 16 --micro-batch 1 --global-batch-seqs 1536 --seq-len 2048 --precision fp16 --zero 0 --overlap off");
}

TEST_CASE("from megatron: examples/mixtral: ep 8 carved from the data-parallel ranks of pp 4") {
    // 64 GPUs / pp 4 = 16 data-parallel ranks, 8 of them expert-parallel; the wandb arguments sit under
    // `if [ -n "${WANDB_API_KEY}" ]`, which only the environment decides: they are ignored settings.
    check_reads_as("--model mixtral-8x7b --hardware dgx-h100 --chips 64", "megatron", megatron_script("train_mixtral_8x7b_distributed.sh"),
                   "--tp 1 --pp 4 --ep 8 --micro-batch 1 --global-batch-seqs 256 --seq-len 4096 --zero 1");
}

TEST_CASE("from megatron: what a script leaves to the environment is named with its line") {
    // The SC21 paper's SRUN.sh runs `sh -c "${CMD}"`, CMD naming $MEGATRON_CODE_DIR from the environment.
    const std::string srun = megatron_script("SRUN.sh");
    expect_refusal("train --model gpt3-175b --hardware dgx-h100 --chips 1024 --from megatron " + srun, {srun, "line 14", "$MEGATRON_CODE_DIR"});
    const std::string base = "train --model llama3-8b --hardware dgx-h100 --chips 64 --from megatron ";
    const std::string positional = write_file("positional.sh", "#!/bin/bash\nTP=$1\ntorchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $TP\n");
    expect_refusal(base + positional, {positional, "--tensor-model-parallel-size", "line 2", "argument 1"});
    const std::string substituted = write_file("substituted.sh", "PP=$(cat pp.txt)\npython pretrain_gpt.py --pipeline-model-parallel-size ${PP}\n");
    expect_refusal(base + substituted, {substituted, "--pipeline-model-parallel-size", "command substitution"});
    const std::string two = write_file("two.sh", "torchrun pretrain_gpt.py --tensor-model-parallel-size 2\ntorchrun pretrain_gpt.py --tensor-model-parallel-size 4\n");
    expect_refusal(base + two, {two, "more than one launch command", "lines 1, 2"});
    const std::string none = write_file("none.sh", "#!/bin/bash\necho hello\n");
    expect_refusal(base + none, {none, "no launch command"});
    const std::string unclosed = write_file("unclosed.sh", "ARGS=(\n  --tensor-model-parallel-size 2\ntorchrun pretrain_gpt.py ${ARGS[@]}\n");
    expect_refusal(base + unclosed, {unclosed, "line 1", "not closed"});
}

TEST_CASE("from maxtext: --emit maxtext reads back to the same plan on a TPU") {
    check_round_trip("--model llama3-70b --hardware tpu-v5p", "--chips 512 --fsdp 64 --tp 8 --recompute full", "maxtext", "fsdp_tp.yml");
    // A GPipe pipeline: 80 layers / 4 stages = 20 a stage, 512 sequences / (16 replicas x 1) = 32 micro-batches.
    check_round_trip("--model llama3-70b --hardware tpu-v5p",
                     "--chips 512 --fsdp 16 --tp 8 --pp 4 --schedule gpipe --micro-batch 1 --global-batch-seqs 512 --recompute full", "maxtext",
                     "pipeline.yml");
    // An MoE model: its experts, top-k and expert width written and checked on the way back.
    check_round_trip("--model mixtral-8x7b --hardware tpu-v5p", "--chips 64 --fsdp 64 --recompute full", "maxtext", "moe.yml");
}

TEST_CASE("from maxtext: a hand-written override gives the degrees worked by hand") {
    // ici fsdp 16 x tensor 4 = 64 devices a slice, dcn_data_parallelism -1 (the default): 256 / 64 = 4 slices;
    // per-device batch 2 x 256 = 512 sequences; gradient accumulation 4 over dp 4 x 16 = 64
    // replicas: 512 / (64 x 4) = 2 sequences a micro-batch. remat_policy left out: MaxText's full.
    const std::string file = write_file("override.yml",
                                        "run_name: llama3-8b-v5p\n"
                                        "base_output_directory: gs://bucket/runs\n"
                                        "ici_fsdp_parallelism: 16\n"
                                        "ici_tensor_parallelism: 4\n"
                                        "per_device_batch_size: 2\n"
                                        "gradient_accumulation_steps: 4\n"
                                        "max_target_length: 8192\n"
                                        "learning_rate: 3.0e-4\n");
    check_reads_as("--model llama3-8b --hardware tpu-v5p --chips 256", "maxtext", file,
                   "--dp 64 --fsdp 16 --tp 4 --global-batch-seqs 512 --micro-batch 2 --recompute full");
}

TEST_CASE("from maxtext: base.yml's defaults: one -1 on ICI and one on DCN, sequences of 2048, 12 a device") {
    // base.yml: ici_fsdp_parallelism -1, dcn_data_parallelism -1, max_target_length 2048,
    // per_device_batch_size 12. One slice of 64 chips: tensor 4 from the file, fsdp the 16 the ICI
    // axes leave, data 1 over DCN; 4 a device x 64 = 256 sequences of 2048 tokens.
    const std::string one_line = write_file("one_line.yml", "ici_tensor_parallelism: 4\nper_device_batch_size: 4\n");
    check_reads_as("--model llama3-8b --hardware tpu-v5p --chips 64", "maxtext", one_line,
                   "--tp 4 --fsdp 16 --dp 16 --seq-len 2048 --global-batch-seqs 256 --micro-batch 16 --recompute full");
    // Nothing but the defaults: fsdp over all 64 chips, 12 sequences a device (768).
    const std::string empty = write_file("empty.yml", "run_name: defaults\n");
    check_reads_as("--model llama3-8b --hardware tpu-v5p --chips 64", "maxtext", empty,
                   "--fsdp 64 --dp 64 --seq-len 2048 --global-batch-seqs 768 --micro-batch 12 --recompute full");
}

TEST_CASE("from maxtext: its 2023-12 recipe scripts read as published (python3 MaxText/train.py base.yml key=value ...)") {
    const auto file = [](const std::string& name) { return ridgeline::test::data_file("launch/maxtext/" + name).string(); };
    // Every script: sequences of 2048 (max_target_length), per_device_batch_size x the chips a step,
    // ici_fsdp_parallelism -1 where not given (base.yml): the fsdp axis takes the chips the tensor
    // axis leaves, one slice (dcn_data_parallelism -1 over one). A v5e-256 slice is 256 chips; a
    // v5p-N or v4-N slice N / 2 (two TensorCores a chip). The models are MaxText's of the day
    // (launch/maxtext/models/, from base.yml and get_individual_scales).
    const auto reads = [&](const std::string& model, const std::string& hardware, int chips, const std::string& name, const std::string& hand) {
        CAPTURE(name);
        check_reads_as("--model " + file("models/" + model + ".json") + " --hardware " + hardware + " --chips " + std::to_string(chips), "maxtext", file(name),
                       hand + " --seq-len 2048");
    };
    // v5e-256: fsdp 256; 6, 4 and 2 a device: 1536, 1024 and 512 sequences, a micro-batch of 6, 4, 2.
    reads("maxtext-16b", "tpu-v5e", 256, "v5e/16b.sh", "--fsdp 256 --dp 256 --global-batch-seqs 1536 --micro-batch 6 --recompute full");
    reads("maxtext-32b", "tpu-v5e", 256, "v5e/32b.sh", "--fsdp 256 --dp 256 --global-batch-seqs 1024 --micro-batch 4 --recompute full");
    reads("maxtext-64b", "tpu-v5e", 256, "v5e/64b.sh", "--fsdp 256 --dp 256 --global-batch-seqs 512 --micro-batch 2 --recompute full");
    // fsdp 16 x tensor 16; 1 a device: 256 sequences over 16 replicas, 16 each.
    reads("maxtext-128b", "tpu-v5e", 256, "v5e/128b.sh", "--fsdp 16 --dp 16 --tp 16 --global-batch-seqs 256 --micro-batch 16 --recompute full");
    // v5p-128 (64 chips), tensor 4: fsdp 16; 8 and 4 a device: 512 and 256 sequences, 32 and 16 a replica; remat minimal.
    for (const std::string dir : {"v5p", "experimental"}) {
        reads("maxtext-32b", "tpu-v5p", 64, dir + "/32b.sh", "--fsdp 16 --dp 16 --tp 4 --global-batch-seqs 512 --micro-batch 32 --recompute maxtext-minimal");
        reads("maxtext-64b", "tpu-v5p", 64, dir + "/64b.sh", "--fsdp 16 --dp 16 --tp 4 --global-batch-seqs 256 --micro-batch 16 --recompute maxtext-minimal");
        // v5p-256 (128 chips), tensor 8: fsdp 16; 2 a device: 256 sequences, 16 a replica.
        reads("maxtext-128b", "tpu-v5p", 128, dir + "/128b.sh", "--fsdp 16 --dp 16 --tp 8 --global-batch-seqs 256 --micro-batch 16 --recompute maxtext-minimal");
        // v5p-1024 (512 chips): tensor 8 x fsdp 64, then tensor 16 x fsdp 32 and full remat; 1024 sequences.
        reads("maxtext-256b", "tpu-v5p", 512, dir + "/256b.sh", "--fsdp 64 --dp 64 --tp 8 --global-batch-seqs 1024 --micro-batch 16 --recompute maxtext-minimal");
        reads("maxtext-512b", "tpu-v5p", 512, dir + "/512b.sh", "--fsdp 32 --dp 32 --tp 16 --global-batch-seqs 1024 --micro-batch 32 --recompute full");
        // v5p-2048 (1024 chips): tensor 16 x fsdp 64; 2048 sequences, 32 a replica.
        reads("maxtext-1024b", "tpu-v5p", 1024, dir + "/1024b.sh", "--fsdp 64 --dp 64 --tp 16 --global-batch-seqs 2048 --micro-batch 32 --recompute full");
    }
    // v4-128 (64 chips), fsdp 64, 16 a device: 1024 sequences; v4-384 (192 chips), fsdp 192, 10 a device: 1920.
    reads("maxtext-22b", "tpu-v4", 64, "v4/22b.sh", "--fsdp 64 --dp 64 --global-batch-seqs 1024 --micro-batch 16 --recompute full");
    reads("maxtext-52b", "tpu-v4", 192, "v4/52b.sh", "--fsdp 192 --dp 192 --global-batch-seqs 1920 --micro-batch 10 --recompute full");
}

TEST_CASE("from maxtext: the dev set's 2023-12 records ran what their recipe scripts ask (recomputation and tensor axis)") {
    // Each record of MaxText's December 2023 table names its script by size and chip (maxtext-v5p-32b-...:
    // v5p/32b.sh); the script, read as published, must give the record's recomputation (its
    // recompute_policy, else its level's policy) and tensor axis. Records of two slices ran the one-slice
    // script on each, so one slice's chips are read.
    std::ifstream in(ridgeline::test::data_file("runs/published-runs-dev.json"));
    const nlohmann::json dev = nlohmann::json::parse(in);
    int checked = 0;
    for (const auto& r : dev.at("records")) {
        if (r.at("source").at("key") != "maxtext_tpu_readme_2023-12") continue;
        std::string id = r.at("id").get<std::string>();  // maxtext-<chip>-<size>-<slices>x-<slice>
        std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        const std::size_t chip_end = id.find('-', 8), size_end = id.find('-', chip_end + 1);
        const std::string chip = id.substr(8, chip_end - 8), size = id.substr(chip_end + 1, size_end - chip_end - 1);
        const auto& hardware = r.at("hardware");
        const long slices = hardware.at("num_slices").is_null() ? 1 : hardware.at("num_slices").get<long>();
        const long chips = hardware.at("count").get<long>() / slices;
        const std::string script = ridgeline::test::data_file("launch/maxtext/" + chip + "/" + size + ".sh").string();
        CAPTURE(id);
        const auto result = run_ridgeline("train --model " + ridgeline::test::data_file("launch/maxtext/models/maxtext-" + size + ".json").string() +
                                          " --hardware tpu-" + chip + " --chips " + std::to_string(chips) + " --from maxtext " + script + " --json");
        REQUIRE(result.exit_code == 0);
        const nlohmann::json plan = nlohmann::json::parse(result.out).at("plan");
        const auto& record_plan = r.at("plan");
        const std::string policy = record_plan.value("recompute_policy", record_plan.at("recompute").get<std::string>());
        CHECK(plan.at("recompute") == policy);
        CHECK(plan.at("axes").at("tensor") == record_plan.at("tp"));
        ++checked;
    }
    CHECK(checked == 23);
}

TEST_CASE("from maxtext: its 2026 v5e scripts (python3 -m, base.yml in the environment's folder) read as published, q/k/v in host memory") {
    const auto file = [](const std::string& name) { return ridgeline::test::data_file("launch/maxtext/tpu-v5e/" + name).string(); };
    // A v5e-256 slice; ici_fsdp_parallelism -1 (base.yml): fsdp over all 256 chips; per_device_batch_size
    // 2 and 8: 512 and 2048 sequences of base.yml's 2048 tokens, as many a replica.
    const std::string job70 = "--model llama2-70b --hardware tpu-v5e --chips 256";
    const std::string job13 = "--model llama2-13b --hardware tpu-v5e --chips 256";
    const std::string plan = " --fsdp 256 --dp 256 --seq-len 2048 --recompute maxtext-qkv-proj-offloaded";
    check_reads_as(job70, "maxtext", file("llama2_70b.sh"), "--global-batch-seqs 512 --micro-batch 2" + plan);
    check_reads_as(job13, "maxtext", file("llama2_13b.sh"), "--global-batch-seqs 2048 --micro-batch 8" + plan);
    // Their headers say they "work out of the box" on a v5e-256 slice: they fit its 16 GiB, and would
    // not with q, k and v kept on the chip.
    for (const auto& [job, script] : {std::pair{job70, std::string("llama2_70b.sh")}, std::pair{job13, std::string("llama2_13b.sh")}}) {
        CAPTURE(script);
        const auto offloaded = run_ridgeline("train " + job + " --from maxtext " + file(script) + " --json");
        REQUIRE(offloaded.exit_code == 0);
        CHECK(nlohmann::json::parse(offloaded.out)["fits"].get<bool>());
        const auto kept = run_ridgeline("train " + job + " --from maxtext " + file(script) + " --recompute maxtext-save-qkv-proj --json");
        REQUIRE(kept.exit_code == 0);
        CHECK_FALSE(nlohmann::json::parse(kept.out)["fits"].get<bool>());
    }
}

TEST_CASE("from maxtext: its GPU model configurations read as published, on its own stack with cuDNN attention") {
    const auto file = [](const std::string& name) { return ridgeline::test::data_file("launch/maxtext/gpu/" + name).string(); };
    // base_config base.yml; no axis given: ici_fsdp_parallelism -1 takes every GPU; per_device_batch_size
    // x GPUs a step, that many a replica; minimal_with_context keeps projections and context (torchtitan-op's
    // modules); the maxtext stack, not the GPU's default Megatron-Core.
    const std::string stack = " --stack maxtext";
    check_reads_as("--model llama2-7b --hardware dgx-h100 --chips 8", "maxtext", file("llama2_7b.yml"),
                   "--fsdp 8 --dp 8 --seq-len 4096 --global-batch-seqs 32 --micro-batch 4 --recompute torchtitan-op" + stack);
    check_reads_as("--model llama2-70b --hardware dgx-h100 --chips 64", "maxtext", file("llama2_70b.yml"),
                   "--fsdp 64 --dp 64 --seq-len 4096 --global-batch-seqs 384 --micro-batch 6 --recompute full" + stack);
    check_reads_as("--model llama3-8b --hardware dgx-h100 --chips 8", "maxtext", file("llama3_8b.yml"),
                   "--fsdp 8 --dp 8 --seq-len 8192 --global-batch-seqs 96 --micro-batch 12 --recompute torchtitan-op" + stack);
    check_reads_as("--model llama3-70b --hardware dgx-h100 --chips 64", "maxtext", file("llama3_70b.yml"),
                   "--fsdp 64 --dp 64 --seq-len 8192 --global-batch-seqs 256 --micro-batch 4 --recompute full" + stack);
    check_reads_as("--model llama3-405b --hardware dgx-h100 --chips 128", "maxtext", file("llama3.1_405b.yml"),
                   "--fsdp 128 --dp 128 --seq-len 4096 --global-batch-seqs 128 --micro-batch 1 --recompute full" + stack);
    const auto run = run_ridgeline("train --model llama2-7b --hardware dgx-h100 --chips 8 --from maxtext " + file("llama2_7b.yml"));
    CHECK(run.out.find("stack maxtext, cudnn") != std::string::npos);
    // Mixtral: capacity_factor 1.0 and megablox false, MaxText's token-dropping MoE, which no model of Ridgeline's prices.
    const std::string mixtral = file("mixtral_8x7b.yml");
    expect_refusal("train --model mixtral-8x7b --hardware dgx-h100 --chips 64 --from maxtext " + mixtral, {mixtral, "capacity_factor", "1.0"});
}

TEST_CASE("from maxtext: a recipe script is refused where it starts from another config, trains in int8 or passes a word that is no override") {
    const std::string base = "train --model llama2-7b --hardware tpu-v5e --chips 256 --from maxtext ";
    const std::string other = write_file("other.sh", "python3 MaxText/train.py MaxText/configs/mine.yml per_device_batch_size=2\n");
    expect_refusal(base + other, {other, "mine.yml", "base.yml"});
    const std::string int8 = write_file("int8.sh", "python3 MaxText/train.py MaxText/configs/base.yml int8_training=true\n");
    expect_refusal(base + int8, {int8, "int8_training", "int8"});
    const std::string word = write_file("word.sh", "python3 MaxText/train.py MaxText/configs/base.yml --steps 30\n");
    expect_refusal(base + word, {word, "--steps", "key=value"});
    const std::string none = write_file("none.sh", "echo nothing to launch\n");
    expect_refusal(base + none, {none, "no launch command"});
}

TEST_CASE("from maxtext: remat policies by MaxText's names, minimal_flash as the minimal_with_context it stands for") {
    const std::string job = "--model llama3-8b --hardware tpu-v5p --chips 64";
    const auto policy = [](const std::string& name) { return write_file(name + ".yml", "remat_policy: " + name + "\n"); };
    check_reads_as(job, "maxtext", policy("minimal_flash"), "--recompute torchtitan-op --fsdp 64 --dp 64 --seq-len 2048 --global-batch-seqs 768 --micro-batch 12");
    check_reads_as(job, "maxtext", policy("save_dot_except_mlp"),
                   "--recompute maxtext-save-dot-except-mlp --fsdp 64 --dp 64 --seq-len 2048 --global-batch-seqs 768 --micro-batch 12");
    check_reads_as(job, "maxtext", policy("save_dot_with_context_except_mlp"),
                   "--recompute maxtext-save-dot-with-context-except-mlp --fsdp 64 --dp 64 --seq-len 2048 --global-batch-seqs 768 --micro-batch 12");
    // save_dot_with_context_except_mlp keeps the projections and the context, so what it repeats is
    // the MLP's up and gate GEMMs: 2 x d_model x 2 d_ff x layers = 2 x 4096 x 28672 x 32 FLOPs a token.
    const auto run = run_ridgeline("train " + job + " --recompute maxtext-save-dot-with-context-except-mlp --json");
    REQUIRE(run.exit_code == 0);
    const auto report = nlohmann::json::parse(run.out);
    const double repeated = (report["hfu"].get<double>() / report["mfu"].get<double>() - 1.0) * report["model_flops_per_token"].get<double>();
    CHECK(repeated == doctest::Approx(2.0 * 4096 * 28672 * 32).scale(0).epsilon(0.005));
    // The offloading policies read as Ridgeline's of the same names; `custom` (per-tensor choices) is refused.
    check_reads_as(job, "maxtext", policy("qkv_proj_offloaded"),
                   "--recompute maxtext-qkv-proj-offloaded --fsdp 64 --dp 64 --seq-len 2048 --global-batch-seqs 768 --micro-batch 12");
    check_reads_as(job, "maxtext", policy("minimal_offloaded"),
                   "--recompute maxtext-minimal-offloaded --fsdp 64 --dp 64 --seq-len 2048 --global-batch-seqs 768 --micro-batch 12");
    const std::string custom = policy("custom");
    expect_refusal("train " + job + " --from maxtext " + custom, {custom, "remat_policy", "custom"});
}

TEST_CASE("from maxtext: unknown keys, contradictory sizes and malformed YAML are refused naming the file and the key") {
    const std::string base = "train --model llama3-8b --hardware tpu-v5p --from maxtext ";
    const std::string unknown = write_file("unknown.yml", "ici_fsdp_parallelism: 8\ndcn_data_parallelism: 1\nuse_magic: true\n");
    expect_refusal(base + unknown, {unknown, "use_magic"});
    const std::string sizes = write_file("sizes.yml", "ici_fsdp_parallelism: 8\ndcn_data_parallelism: 2\n");
    expect_refusal(base + sizes + " --chips 64", {sizes, "dcn_*_parallelism", "--chips says 64"});
    const std::string autos = write_file("autos.yml", "ici_tensor_parallelism: -1\nici_fsdp_parallelism: -1\n");
    expect_refusal(base + autos + " --chips 64", {autos, "-1", "one axis of each level"});
    const std::string malformed = write_file("malformed.yml", "ici_fsdp_parallelism: [8\n");
    expect_refusal(base + malformed, {malformed, "YAML"});
    const std::string nested = write_file("nested.yml", "ici_fsdp_parallelism:\n  value: 8\n");
    expect_refusal(base + nested, {nested, "ici_fsdp_parallelism"});
    const std::string remat = write_file("remat.yml", "ici_fsdp_parallelism: 8\ndcn_data_parallelism: 1\nremat_policy: save_everything\n");
    expect_refusal(base + remat, {remat, "remat_policy"});
    // A shape that is not --model's: Llama 3 8B has 32 layers and 8 key/value heads (Meta's config.json), a
    // dense model one expert; Mixtral 8x7B's experts are 14336 wide (Mistral AI's config.json).
    const std::string moe = "train --model mixtral-8x7b --hardware tpu-v5p --from maxtext ";
    const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> shapes = {
        {base, "base_num_decoder_layers: 80", {"base_num_decoder_layers", "80", "32"}},
        {base, "base_num_kv_heads: 32", {"base_num_kv_heads", "8"}},
        {base, "num_experts: 8", {"num_experts", "dense"}},
        {moe, "base_moe_mlp_dim: 4096", {"base_moe_mlp_dim", "14336"}}};
    for (const auto& [command, line, needles] : shapes) {
        const std::string file = write_file("shape.yml", "ici_fsdp_parallelism: 8\ndcn_data_parallelism: 1\n" + line + "\n");
        std::vector<std::string> expected = needles;
        expected.push_back(file);
        expect_refusal(command + file, expected);
    }
}

TEST_CASE("from torchtitan: --emit torchtitan reads back to the same plan (FSDP x TP, an interleaved pipeline with op-level recompute, MoE in fp8)") {
    const std::string base = "--model llama3.1-70b --hardware dgx-h100 --chips 64 --stack torchtitan";
    check_round_trip(base, "--fsdp 8 --tp 8 --sp --recompute full", "torchtitan", "fsdp_tp.toml");
    check_round_trip(base, "--fsdp 2 --tp 8 --sp --pp 4 --vpp 2 --recompute torchtitan-op --micro-batch 2 --global-batch-seqs 128", "torchtitan",
                     "interleaved.toml");
    check_round_trip("--model mixtral-8x7b --hardware dgx-h100 --chips 64 --stack torchtitan",
                     "--fsdp 8 --tp 8 --sp --ep 8 --etp 1 --fold-experts --recompute full --precision fp8", "torchtitan", "moe_fp8.toml");
}

TEST_CASE("from torchtitan: a job file with torchtitan's defaults gives the plan worked by hand") {
    // 64 GPUs / (tp 8 x pp 4) = 2 sharded data-parallel ranks (dp_shard -1); torchtitan's default
    // split weighs the embedding and the output a layer each: 82 / 4 stages = 20 rest 2, so
    // 21 - 1, 21, 20, 20 - 1 = 20, 21, 20, 19 layers; 16 sequences a rank in micro-batches of 2 =
    // 32 sequences; pipelining: FSDP's "default" keeps the weights after the forward pass; compile
    // on: the torchtitan stack.
    const std::string file = write_file("defaults.toml",
                                        "[job]\ndescription = \"Llama 3 70B training\"\n"
                                        "[model]\nname = \"llama3\"\nflavor = \"70B\"\nhf_assets_path = \"./assets/hf/Llama-3.1-70B\"\n"
                                        "[optimizer]\nname = \"AdamW\"\nlr = 1.5e-4\n"
                                        "[training]\nlocal_batch_size = 16\nseq_len = 8192\nsteps = 1000\n"
                                        "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8\n"
                                        "pipeline_parallel_degree = 4\npipeline_parallel_microbatch_size = 2\n"
                                        "[activation_checkpoint]\nmode = \"full\"\n"
                                        "[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n");
    check_reads_as("--model llama3-70b --hardware dgx-h100 --chips 64", "torchtitan", file,
                   "--tp 8 --sp --pp 4 --fsdp 2 --stage-layers 20,21,20,19 --micro-batch 2 --global-batch-seqs 32 --recompute full "
                   "--stack torchtitan --reshard-after-forward off");
}

// torchtitan v0.2.2's own job files (tests/data/launch/torchtitan, SOURCES.md), each plan worked by
// hand from the file and torchtitan's defaults (job_config.py): dp_shard -1 takes the GPUs the other
// degrees leave; the global batch is local_batch_size x the data-parallel ranks; tp > 1 brings
// SequenceParallel norms; compile reaches the model only where compile.components names it.
TEST_CASE("from torchtitan: v0.2.2's own job files read as published, or are refused for a reason torchtitan shares") {
    const auto file = [](const std::string& name) { return ridgeline::test::data_file("launch/torchtitan/" + name).string(); };
    // Its note: "a preset for 64 A100 GPUs"; 64 sharded ranks x 1 sequence; selective "op" recompute; no compile.
    check_reads_as("--model llama3.1-8b --hardware dgx-a100 --chips 64", "torchtitan", file("llama3_8b.toml"),
                   "--fsdp 64 --seq-len 8192 --global-batch-seqs 64 --micro-batch 1 --recompute torchtitan-op --stack pytorch-eager");
    // 64 A100s / tp 8 = 8 sharded ranks x 8 sequences; full recompute.
    check_reads_as("--model llama3.1-70b --hardware dgx-a100 --chips 64", "torchtitan", file("llama3_70b.toml"),
                   "--tp 8 --sp --fsdp 8 --seq-len 8192 --global-batch-seqs 64 --micro-batch 8 --recompute full --stack pytorch-eager");
    // "8 H100 GPUs": mode "full" recomputes every layer; selective_ac_option is read only with mode "selective".
    check_reads_as("--model qwen3-32b --hardware dgx-h100 --chips 8", "torchtitan", file("qwen3_32b.toml"),
                   "--fsdp 8 --seq-len 4096 --global-batch-seqs 16 --micro-batch 2 --recompute full --stack pytorch-eager");
    // compile.enable with components ["loss"]: the model runs eager; expert_parallel_degree 1.
    check_reads_as("--model deepseek-v3 --hardware dgx-h100 --chips 256", "torchtitan", file("deepseek_v3_671b.toml"),
                   "--fsdp 256 --seq-len 4096 --global-batch-seqs 1024 --micro-batch 4 --recompute torchtitan-op --stack pytorch-eager");
    // converters = ["float8"]: v0.2.2 registers its fp8 converter as "quantize.linear.float8"
    // (components/quantization/float8.py), so torchtitan itself stops at this file's converter name.
    expect_refusal("train --model llama3-405b --hardware dgx-h100 --chips 128 --from torchtitan " + file("llama3_405b.toml"),
                   {"llama3_405b.toml", "model.converters", "float8"});
}

// A real file carries many settings that change nothing Ridgeline models (checkpointing, logging,
// the learning rate): one note lists them all, and --strict refuses them instead.
TEST_CASE("from: the settings a real file gives that change nothing modelled are listed once, or refused under --strict") {
    const std::string file = ridgeline::test::data_file("launch/torchtitan/llama3_8b.toml").string();
    const std::string train = "train --model llama3.1-8b --hardware dgx-a100 --chips 64 --from torchtitan " + file;
    const auto read = ridgeline::test::run_ridgeline(train + " --json");
    REQUIRE(read.exit_code == 0);
    // [checkpoint] interval = 500, [metrics] log_freq = 10, [optimizer] lr = 8e-4 in the file as published.
    const auto note = read.err.find("note: " + file + ": not read");
    REQUIRE(note != std::string::npos);
    CHECK(read.err.find('\n', note) == read.err.size() - 1);  // one line
    for (const char* key : {"checkpoint.interval", "metrics.log_freq", "optimizer.lr"}) CHECK(read.err.find(key) != std::string::npos);
    CHECK(read.err.find("parallelism.") == std::string::npos);  // what it reads is not in the note
    expect_refusal(train + " --strict", {file, "checkpoint.", "--strict", "metrics.log_freq", "optimizer.lr"});
    expect_refusal("train --model llama3.1-8b --hardware dgx-a100 --chips 64 --strict", {"--strict", "--from"});
}

TEST_CASE("from torchtitan: v0.1.0's job files read in that release's names (training.compile, [float8], converter \"float8\")") {
    const auto file = [](const std::string& name) { return ridgeline::test::data_file("launch/torchtitan/v0.1.0/" + name).string(); };
    // The same plans as v0.2.2's files: training.compile = false is compile.enable = false.
    check_reads_as("--model llama3.1-8b --hardware dgx-a100 --chips 64", "torchtitan", file("llama3_8b.toml"),
                   "--fsdp 64 --seq-len 8192 --global-batch-seqs 64 --micro-batch 1 --recompute torchtitan-op --stack pytorch-eager");
    check_reads_as("--model llama3.1-70b --hardware dgx-a100 --chips 64", "torchtitan", file("llama3_70b.toml"),
                   "--tp 8 --sp --fsdp 8 --seq-len 8192 --global-batch-seqs 64 --micro-batch 8 --recompute full --stack pytorch-eager");
    // "a preset for 128 H100 GPUs": tp 8, fsdp the 16 ranks left, 2 sequences each (32); converters
    // ["float8"], v0.1.0's name for the fp8 linear converter, in a file its [float8] table marks as
    // v0.1.0; training.compile = true compiles the model, so async TP is read.
    check_reads_as("--model llama3-405b --hardware dgx-h100 --chips 128", "torchtitan", file("llama3_405b.toml"),
                   "--tp 8 --sp --tp-overlap --fsdp 16 --seq-len 8192 --global-batch-seqs 32 --micro-batch 2 --recompute full --precision fp8 --stack torchtitan");
    // A file mixing the releases' names for one setting is refused naming both.
    const std::string mixed = write_file("mixed.toml", "[training]\ncompile = false\n[compile]\nenable = true\n");
    expect_refusal("train --model llama3.1-8b --hardware dgx-h100 --chips 8 --from torchtitan " + mixed, {mixed, "training.compile", "compile.enable", "v0.1.0"});
}

TEST_CASE("from torchtitan: unknown, contradictory and malformed settings are refused naming the file and the key") {
    const std::string base = "train --model llama3-8b --hardware dgx-h100 --chips 64 --from torchtitan ";
    const std::string ac = "[activation_checkpoint]\nmode = \"full\"\n";
    const std::string unknown = write_file("unknown.toml", ac + "[parallelism]\ntensor_parallel_degree = 8\nuse_magic = true\n");
    expect_refusal(base + unknown, {unknown, "parallelism.use_magic"});
    const std::string sizes = write_file("sizes.toml", ac + "[parallelism]\ndata_parallel_shard_degree = 4\ntensor_parallel_degree = 8\n");
    expect_refusal(base + sizes, {sizes, "parallelism.data_parallel_shard_degree", "--chips says 64"});
    const std::string layer_ac = write_file("layer_ac.toml", "[parallelism]\ntensor_parallel_degree = 8\n");
    expect_refusal(base + layer_ac, {layer_ac, "activation_checkpoint.mode", "every second layer"});
    const std::string async = write_file("async.toml", ac + "[parallelism]\ntensor_parallel_degree = 8\nenable_async_tensor_parallel = true\n");
    expect_refusal(base + async, {async, "parallelism.enable_async_tensor_parallel", "compile"});
    const std::string model = write_file("model.toml", ac + "[model]\nname = \"llama3\"\nflavor = \"70B\"\n");
    expect_refusal(base + model, {model, "model.", "llama3.1-70b", "shape"});
    const std::string schedule = write_file("schedule.toml", ac + "[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = \"ZBVZeroBubble\"\n");
    expect_refusal(base + schedule, {schedule, "parallelism.pipeline_parallel_schedule"});
    const std::string malformed = write_file("malformed.toml", "[parallelism\ntensor_parallel_degree = 8\n");
    expect_refusal(base + malformed, {malformed, "TOML", "line 1"});
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --from torchtitan " + layer_ac, {"--chips"});
}

// Every shipped strategy with a plan it fits, through each training framework: what a framework
// can express reads back to the same report; what it cannot is refused naming --emit.
TEST_CASE("from: every real launch file that reads writes back, in its framework's names, to the same plan and report") {
    // The corpus of tests/data/launch/ (SOURCES.md): read, --emit the same framework, read that:
    // the report must be the same, so every cost-changing setting of the original is in the copy.
    struct Case {
        std::string framework, file, job;
    };
    std::vector<Case> cases = {
        {"megatron", "megatron/train_llama3_8b_h100_fp8.sh", "--model llama3-8b --hardware dgx-h100 --chips 8"},
        {"megatron", "megatron/train_llama3_8b_fsdp_h100_fp8.sh", "--model llama3-8b --hardware dgx-h100 --chips 8"},
        {"megatron", "megatron/train_gpt3_175b_distributed.sh", "--model gpt3-175b --hardware dgx-h100 --chips 1024"},
        {"megatron", "megatron/train_mixtral_8x7b_distributed.sh", "--model mixtral-8x7b --hardware dgx-h100 --chips 64"},
        {"torchtitan", "torchtitan/llama3_8b.toml", "--model llama3.1-8b --hardware dgx-a100 --chips 64"},
        {"torchtitan", "torchtitan/llama3_70b.toml", "--model llama3.1-70b --hardware dgx-a100 --chips 64"},
        {"torchtitan", "torchtitan/qwen3_32b.toml", "--model qwen3-32b --hardware dgx-h100 --chips 8"},
        {"torchtitan", "torchtitan/deepseek_v3_671b.toml", "--model deepseek-v3 --hardware dgx-h100 --chips 256"},
        {"torchtitan", "torchtitan/v0.1.0/llama3_8b.toml", "--model llama3.1-8b --hardware dgx-a100 --chips 64"},
        {"torchtitan", "torchtitan/v0.1.0/llama3_70b.toml", "--model llama3.1-70b --hardware dgx-a100 --chips 64"},
        {"torchtitan", "torchtitan/v0.1.0/llama3_405b.toml", "--model llama3-405b --hardware dgx-h100 --chips 128"},
    };
    const auto maxtext = [&](const std::string& script, const std::string& model, const std::string& hardware, int chips) {
        cases.push_back({"maxtext", "maxtext/" + script,
                         "--model " + ridgeline::test::data_file("launch/maxtext/models/" + model + ".json").string() + " --hardware " + hardware +
                             " --chips " + std::to_string(chips)});
    };
    for (const std::string size : {"16", "32", "64", "128"}) maxtext("v5e/" + size + "b.sh", "maxtext-" + size + "b", "tpu-v5e", 256);
    for (const std::string dir : {"v5p", "experimental"})
        for (const auto& [size, chips] : std::vector<std::pair<std::string, int>>{{"32", 64}, {"64", 64}, {"128", 128}, {"256", 512}, {"512", 512}, {"1024", 1024}})
            maxtext(dir + "/" + size + "b.sh", "maxtext-" + size + "b", "tpu-v5p", chips);
    maxtext("v4/22b.sh", "maxtext-22b", "tpu-v4", 64);
    maxtext("v4/52b.sh", "maxtext-52b", "tpu-v4", 192);
    for (const auto& [name, model, chips] : std::vector<std::tuple<std::string, std::string, int>>{
             {"llama2_7b", "llama2-7b", 8}, {"llama2_70b", "llama2-70b", 64}, {"llama3_8b", "llama3-8b", 8}, {"llama3_70b", "llama3-70b", 64},
             {"llama3.1_405b", "llama3-405b", 128}})
        cases.push_back({"maxtext", "maxtext/gpu/" + name + ".yml", "--model " + model + " --hardware dgx-h100 --chips " + std::to_string(chips)});
    // Of 37 files: SRUN.sh, v0.2.2's llama3_405b.toml and MaxText's mixtral_8x7b.yml are refused (their tests say why).
    CHECK(cases.size() == 34);
    const std::map<std::string, std::string> extension = {{"megatron", ".args"}, {"maxtext", ".yml"}, {"torchtitan", ".toml"}};
    for (const Case& c : cases) {
        CAPTURE(c.file);
        const std::string file = ridgeline::test::data_file("launch/" + c.file).string();
        const auto emitted = run_ridgeline("train " + c.job + " --from " + c.framework + " " + file + " --emit " + c.framework);
        CAPTURE(emitted.err);
        REQUIRE(emitted.exit_code == 0);
        std::string name = c.file;
        std::replace(name.begin(), name.end(), '/', '_');
        const std::string copy = write_file(name + extension.at(c.framework), emitted.out);
        const auto original = run_ridgeline("train " + c.job + " --from " + c.framework + " " + file + " --json");
        const auto again = run_ridgeline("train " + c.job + " --from " + c.framework + " " + copy + " --json");
        CAPTURE(again.err);
        REQUIRE(original.exit_code == 0);
        REQUIRE(again.exit_code == 0);
        CHECK(again.out == original.out);
    }
}

TEST_CASE("from: every shipped strategy round-trips through each framework that can express its plan") {
    struct Case {
        const char* strategy;
        const char* flags;
    };
    const std::string dense = "--model llama3-8b --hardware dgx-h100 --chips 64 --stack torchtitan --recompute full ";
    const std::string moe = "--model mixtral-8x7b --hardware dgx-h100 --chips 64 --stack torchtitan --recompute full ";
    const std::vector<std::pair<std::string, Case>> cases = {
        {dense, {"dp", "--dp 64 --zero 0"}},
        {dense, {"fsdp", "--fsdp 64"}},
        {dense, {"fsdp-tp", "--fsdp 8 --tp 8 --sp"}},
        {dense, {"megatron-tp", "--tp 8 --zero 0"}},
        {dense, {"megatron-tp-sp", "--tp 8 --sp --fsdp 8"}},
        {dense, {"megatron-3d", "--tp 8 --pp 2"}},
        {dense, {"megatron-3d-sp", "--tp 8 --pp 2 --vpp 2 --sp --fsdp 4"}},
        {dense, {"megatron-3d-sp-cp-allgather", "--tp 4 --cp 2 --pp 2 --sp --fsdp 4"}},
        {moe, {"megatron-3d-etp1", "--pp 2 --ep 8 --etp 1 --zero 0"}},
        {moe, {"megatron-3d-sp-etp1", "--tp 4 --pp 2 --ep 8 --etp 1 --fold-experts --sp"}},
        {dense, {"zero2", "--zero 2"}},
        {dense, {"maxtext", "--fsdp 8 --tp 8"}},
    };
    std::map<std::string, int> round_trips;
    for (const auto& [base, c] : cases) {
        for (const char* framework : {"megatron", "maxtext", "torchtitan"}) {
            const std::string job = base + "--strategy " + c.strategy;
            const std::string label = std::string(c.strategy) + " through " + framework;
            CAPTURE(label);
            const auto emitted = run_ridgeline("train " + job + " " + c.flags + " --emit " + framework);
            if (emitted.exit_code == 2) {
                CAPTURE(emitted.err);
                CHECK(emitted.err.find("--emit") != std::string::npos);
                continue;
            }
            check_round_trip(job, c.flags, framework, std::string(c.strategy) + "." + framework);
            ++round_trips[c.strategy];
        }
    }
    for (const auto& [base, c] : cases) {
        const std::string strategy = c.strategy;
        CAPTURE(strategy);
        CHECK(round_trips[c.strategy] >= 1);
    }
}

TEST_CASE("from: search train fixes what the file fixes and searches the rest") {
    const std::string file = write_file("search.args", "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2\n");
    const auto result = run_ridgeline("search train --model llama3-8b --hardware dgx-h100 --chips 64 --from megatron " + file + " --top 3 --emit megatron --emit-top 3");
    CAPTURE(result.err);
    REQUIRE(result.exit_code == 0);
    // Every plan written keeps tp 4 and pp 2.
    std::size_t plans = 0;
    for (std::size_t at = result.out.find("--tensor-model-parallel-size 4"); at != std::string::npos;
         at = result.out.find("--tensor-model-parallel-size 4", at + 1))
        ++plans;
    CHECK(plans == 3);
    CHECK(result.out.find("--tensor-model-parallel-size 1") == std::string::npos);
    CHECK(result.out.find("--pipeline-model-parallel-size 1") == std::string::npos);
}

TEST_CASE("from torchtitan: search train keeps the file's FSDP resharding in every plan it ranks") {
    // tp 8 x 8 sharded data-parallel ranks on 64 GPUs; FSDP2 keeps the weights after the forward pass.
    for (const auto& [setting, reshard] : {std::pair{"never", false}, std::pair{"always", true}}) {
        const std::string file = write_file(std::string("reshard-") + setting + ".toml",
                                            "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                                            "[training]\nlocal_batch_size = 4\nseq_len = 8192\n"
                                            "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8\n"
                                            "fsdp_reshard_after_forward = \"" + std::string(setting) + "\"\n"
                                            "[activation_checkpoint]\nmode = \"full\"\n");
        const auto result = run_ridgeline("search train --model llama3-8b --hardware dgx-h100 --chips 64 --from torchtitan " + file + " --top 3 --json");
        CAPTURE(result.err);
        REQUIRE(result.exit_code == 0);
        const nlohmann::json doc = nlohmann::json::parse(result.out);
        REQUIRE(!doc["top"].empty());
        for (const auto& entry : doc["top"]) {
            CHECK(entry["plan"]["fsdp"] == 8);
            CHECK(entry["plan"]["reshard_after_forward"] == reshard);
        }
    }
}
