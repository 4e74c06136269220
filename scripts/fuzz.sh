#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in build-fuzz/ and runs each for SECONDS (default 30),
# seeded with the shipped files of its kind. A crash, hang or leak fails the run and leaves the
# input in build-fuzz/findings/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}

bash scripts/install-packages.sh clang libclang-rt-14-dev

CXX=clang++ cmake -S . -B build-fuzz -DRIDGELINE_FUZZ=ON -DRIDGELINE_BUILD_TESTS=OFF -DRIDGELINE_WARNINGS_AS_ERRORS=OFF \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz -j "$(nproc)"
declare -A seeds=(
  [chip]="hardware/chips" [system]="hardware/systems" [model]="models" [hf_config]="tests/data/hf"
  [strategy]="strategies" [stack]="stacks" [topology]="hardware/topologies" [scenario]="scenarios" [run_records]="tests/data/runs"
  [calibration]="tests/data/calibration" [kernel_measurements]="tests/data/reference" [emitter]="emitters"
  [residuals]="accuracy" [launch_script]="tests/data/launch/megatron" [engine]="engines" [trace]="tests/data/traces"
)
for target in "${!seeds[@]}"; do
  corpus="build-fuzz/corpus/$target"
  findings="build-fuzz/findings/$target"
  mkdir -p "$corpus" "$findings"
  cp "${seeds[$target]}"/*.json "${seeds[$target]}"/*.sh "${seeds[$target]}"/*.jsonl "$corpus"/ 2>/dev/null || true
  cp tests/data/hostile/*.json "$corpus"/ 2>/dev/null || true  # broken files of every kind
  echo "fuzzing $target for ${seconds}s"
  ASAN_OPTIONS=detect_leaks=1 "build-fuzz/fuzz/fuzz_$target" "$corpus" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=262144 -artifact_prefix="$findings/" -print_final_stats=0 2>&1 | tail -n 2
done
