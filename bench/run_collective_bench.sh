#!/usr/bin/env bash
# Builds and runs the shared-memory collective benchmark (Release): the cpu backend's ring
# collectives on two devices against a one-thread memcpy of the same size, messages >= 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline_collective_bench
build/ridgeline_collective_bench
