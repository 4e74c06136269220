// The static reader of launch scripts: each case's words are what bash itself would pass to the
// training script, worked by hand from bash's expansion rules (and checked by running bash where
// the script needs nothing from outside).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "from/shell_script.hpp"

using namespace ridgeline;

namespace {

std::vector<std::string> texts(const LaunchCommand& c) {
    std::vector<std::string> out;
    for (const ShellWord& w : c.args) out.push_back(w.text);
    return out;
}

using Words = std::vector<std::string>;

}  // namespace

TEST_CASE("shell: defaults, arithmetic, arrays, += and quoting expand as bash expands them") {
    const LaunchCommand c = read_launch_command(
        "#!/bin/bash\n"
        "GPUS=${GPUS_PER_NODE:-8}   # the environment does not set it: the default\n"
        "NODES=4\n"
        "TP=${1:-2}\n"
        "LAYERS=$(( (NODES * 8) / 2 + 1 ))\n"
        "ARGS=(\n"
        "  --num-layers $LAYERS   # a comment inside the array\n"
        "  \"--tensor-model-parallel-size $TP\"\n"
        ")\n"
        "ARGS+=(--seq-length 4096)\n"
        "NAME='a b'\n"
        "export OUT=\"run ${NAME}\"\n"
        "torchrun --nproc_per_node $GPUS --nnodes=$NODES \\\n"
        "    pretrain_gpt.py ${ARGS[@]} --name \"$OUT\" $NAME > log.txt 2>&1\n",
        "t.sh");
    CHECK(c.line == 13);
    CHECK(c.launcher == "torchrun");
    CHECK(c.script == "pretrain_gpt.py");
    CHECK(c.processes == 32);  // 8 per node x 4 nodes
    CHECK(texts(c) == Words{"--num-layers", "17", "--tensor-model-parallel-size", "2", "--seq-length", "4096", "--name", "run a b", "a", "b"});
    for (const ShellWord& w : c.args) CHECK(!w.unknown);
}

TEST_CASE("shell: if/elif/else on known values take one branch, an unknown test marks what it sets") {
    const LaunchCommand c = read_launch_command(
        "MODE=fast\n"
        "if [[ \"$MODE\" == \"slow\" ]]; then\n"
        "  PP=8\n"
        "elif [ \"$MODE\" = fast ] && [ 4 -gt 2 ]\n"
        "then\n"
        "  PP=2\n"
        "else\n"
        "  PP=1\n"
        "fi\n"
        "if [ -f /etc/hosts ]; then EXTRA=--log-timers; fi\n"
        "python3 train.py --pipeline-model-parallel-size $PP $EXTRA\n",
        "t.sh");
    REQUIRE(c.args.size() == 3);
    CHECK(texts(c)[1] == "2");
    CHECK(!c.args[1].unknown);
    REQUIRE(c.args[2].unknown);
    CHECK(c.args[2].unknown->find("line 10") != std::string::npos);
    CHECK(c.processes == 0);  // python alone says nothing of how many processes run
}

TEST_CASE("shell: what only running the script can tell stays unknown, with its line and why") {
    const LaunchCommand c = read_launch_command(
        "DATE=$(date +%s)\n"
        "srun --ntasks 16 python pretrain_gpt.py --save /ckpt/$DATE --data $DATA_DIR --load $2 --iters `cat n`\n",
        "t.sh");
    CHECK(c.processes == 16);
    REQUIRE(c.args.size() == 8);
    REQUIRE(c.args[1].unknown);
    CHECK(c.args[1].unknown->find("line 1") != std::string::npos);
    CHECK(c.args[1].unknown->find("command substitution") != std::string::npos);
    CHECK(c.args[3].unknown->find("$DATA_DIR is not set by the script") != std::string::npos);
    CHECK(c.args[5].unknown->find("argument 2") != std::string::npos);
    CHECK(c.args[7].unknown->find("command substitution") != std::string::npos);
}

TEST_CASE("shell: eval and sh -c run a known string, functions and loops are not taken as the launch") {
    const LaunchCommand c = read_launch_command(
        "run() {\n"
        "  torchrun other.py --a 1\n"
        "}\n"
        "for i in 1 2; do\n"
        "  N=$i\n"
        "done\n"
        "CMD=\"python -u pretrain_gpt.py --micro-batch-size 4\"\n"
        "mpirun -np 64 sh -c \"${CMD}\"\n",
        "t.sh");
    CHECK(c.script == "pretrain_gpt.py");
    CHECK(c.line == 8);
    CHECK(texts(c) == Words{"--micro-batch-size", "4"});
    const LaunchCommand e = read_launch_command("OPTS='--seq-length 2048'\neval \"deepspeed --num_gpus 8 --num_nodes 2 train.py $OPTS\"\n", "e.sh");
    CHECK(e.processes == 16);
    CHECK(texts(e) == Words{"--seq-length", "2048"});
}

// As Megatron-LM's examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh submits its job: sbatch reads
// the script from a here-document, whose srun runs `bash -x -c "${TRAINING_CMD}"`.
TEST_CASE("shell: sbatch <<EOF runs its here-document as the script, and a data document is no launch") {
    const LaunchCommand c = read_launch_command(
        "CMD=\"python pretrain_gpt.py --tensor-model-parallel-size 4\"\n"
        "cat <<'DATA' > notes.txt\n"
        "torchrun other.py --a 1\n"
        "DATA\n"
        "sbatch <<EOF\n"
        "#!/bin/bash\n"
        "#SBATCH --nodes=2\n"
        "srun --ntasks=16 bash -x -c \"${CMD} --seq-length 4096\" 2>&1 | tee \\${SLURM_JOB_ID}.log\n"
        "EOF\n"
        "echo submitted\n",
        "sb.sh");
    CHECK(c.script == "pretrain_gpt.py");
    CHECK(c.line == 8);
    CHECK(texts(c) == Words{"--tensor-model-parallel-size", "4", "--seq-length", "4096"});
    // <<- strips the body's leading tabs, the delimiter's too; a quoted delimiter reads the same here.
    const LaunchCommand t = read_launch_command("bash <<-'END'\n\ttorchrun --nproc_per_node 8 train.py --lr 1\n\tEND\n", "tabs.sh");
    CHECK(t.processes == 8);
    CHECK(texts(t) == Words{"--lr", "1"});
    CHECK_THROWS_WITH_AS(read_launch_command("sbatch <<\n", "nodelim.sh"), doctest::Contains("delimiter"), InputError);
    // Only the document is data: a launch inside `cat <<EOF` is none, so this script has none.
    CHECK_THROWS_WITH_AS(read_launch_command("cat <<EOF\ntorchrun t.py\nEOF\n", "data.sh"), doctest::Contains("no launch command"), InputError);
    CHECK_THROWS_WITH_AS(read_launch_command("cat<<EOF\ntorchrun t.py\nEOF\n", "nospace.sh"), doctest::Contains("no launch command"), InputError);
}

TEST_CASE("shell: malformed scripts and scripts with no single launch are refused naming the file and line") {
    CHECK_THROWS_WITH_AS(read_launch_command("A='x\ntorchrun t.py\n", "q.sh"), doctest::Contains("q.sh"), InputError);
    CHECK_THROWS_WITH_AS(read_launch_command("if [ 1 ]; then\ntorchrun t.py\n", "if.sh"), doctest::Contains("line 1"), InputError);
    CHECK_THROWS_WITH_AS(read_launch_command("echo hi\n", "none.sh"), doctest::Contains("no launch command"), InputError);
    CHECK_THROWS_WITH_AS(read_launch_command("if [ -f x ]; then\n  torchrun t.py\nfi\n", "maybe.sh"), doctest::Contains("condition on line 1"), InputError);
    CHECK_THROWS_WITH_AS(read_launch_command("X=$((1/0))\npython t.py --a $X\nfi\n", "div.sh"), doctest::Contains("closes nothing"), InputError);
    // eval of itself is bounded, never a hang or a stack overflow
    CHECK_THROWS_AS(read_launch_command("E='eval \"$E\"'\neval \"$E\"\n", "loop.sh"), InputError);
    CHECK(!looks_like_shell_script("# args\n--tensor-model-parallel-size 2\n"));
    CHECK(looks_like_shell_script("#!/bin/bash\nexport A=1\n"));
}

TEST_CASE("shell: python -m MODULE is the launch where no .py script is run, and package tools and launcher modules are not") {
    // As MaxText's 2026 scripts launch: the module's folder of configurations is the environment's.
    const LaunchCommand m = read_launch_command(
        "export EXECUTABLE=\"train\"\n"
        "python3 -m pip install -r requirements.txt\n"
        "python3 -m maxtext.trainers.pre_train.$EXECUTABLE \"${CONFIGS:-${ROOT:-$PWD}/configs}\"//base.yml steps=15\n",
        "m.sh");
    CHECK(m.line == 3);
    CHECK(m.script == "maxtext.trainers.pre_train.train");
    REQUIRE(m.args.size() == 2);
    // bash gives "$PWD/configs//base.yml": the folder is unknown, the name after it is the script's.
    REQUIRE(m.args[0].unknown);
    CHECK(m.args[0].text.substr(m.args[0].known_from) == "//base.yml");
    CHECK(texts(m)[1] == "steps=15");
    CHECK_FALSE(m.args[1].unknown);
    // A launcher module runs the .py script after it.
    const LaunchCommand t = read_launch_command("python -m torch.distributed.run --nproc_per_node 8 pretrain_gpt.py --seq-length 4096\n", "t.sh");
    CHECK(t.script == "pretrain_gpt.py");
    CHECK(texts(t) == Words{"--seq-length", "4096"});
    CHECK_THROWS_AS((void)read_launch_command("python -m pip install ridgeline\n", "p.sh"), InputError);
}
