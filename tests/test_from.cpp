// --from FRAMEWORK FILE: a plan read back from a launch configuration. Round trips (what --emit
// writes reads back to the same plan, so the same predicted step), a hand-written Megatron-LM
// arguments file whose degrees are worked by hand, and refusals naming the file and the key.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

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
    const std::string twice = write_file("twice.args", "--tensor-model-parallel-size 8\n--tensor-model-parallel-size 4\n");
    expect_refusal(base + twice, {twice, "--tensor-model-parallel-size", "twice"});
    const std::string command = write_file("command.args", "torchrun pretrain_gpt.py --tensor-model-parallel-size 8\n");
    expect_refusal(base + command, {command, "torchrun"});
    expect_refusal("train --model llama3-8b --hardware dgx-h100 --from megatron " + sizes, {"--chips"});
}

TEST_CASE("from maxtext: --emit maxtext reads back to the same plan on a TPU") {
    check_round_trip("--model llama3-70b --hardware tpu-v5p", "--chips 512 --fsdp 64 --tp 8 --recompute full", "maxtext", "fsdp_tp.yml");
    // A GPipe pipeline: 80 layers / 4 stages = 20 a stage, 512 sequences / (16 replicas x 1) = 32 micro-batches.
    check_round_trip("--model llama3-70b --hardware tpu-v5p",
                     "--chips 512 --fsdp 16 --tp 8 --pp 4 --schedule gpipe --micro-batch 1 --global-batch-seqs 512 --recompute full", "maxtext",
                     "pipeline.yml");
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

TEST_CASE("from maxtext: unknown keys, contradictory sizes and malformed YAML are refused naming the file and the key") {
    const std::string base = "train --model llama3-8b --hardware tpu-v5p --from maxtext ";
    const std::string unknown = write_file("unknown.yml", "ici_fsdp_parallelism: 8\ndcn_data_parallelism: 1\nuse_magic: true\n");
    expect_refusal(base + unknown, {unknown, "use_magic"});
    const std::string sizes = write_file("sizes.yml", "ici_fsdp_parallelism: 8\ndcn_data_parallelism: 2\n");
    expect_refusal(base + sizes + " --chips 64", {sizes, "dcn_*_parallelism", "--chips says 64"});
    const std::string autos = write_file("autos.yml", "ici_tensor_parallelism: 4\n");
    expect_refusal(base + autos + " --chips 64", {autos, "-1"});
    const std::string malformed = write_file("malformed.yml", "ici_fsdp_parallelism: [8\n");
    expect_refusal(base + malformed, {malformed, "YAML"});
    const std::string nested = write_file("nested.yml", "ici_fsdp_parallelism:\n  value: 8\n");
    expect_refusal(base + nested, {nested, "ici_fsdp_parallelism"});
    const std::string remat = write_file("remat.yml", "ici_fsdp_parallelism: 8\ndcn_data_parallelism: 1\nremat_policy: save_everything\n");
    expect_refusal(base + remat, {remat, "remat_policy"});
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
