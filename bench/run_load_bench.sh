#!/usr/bin/env bash
# Builds and runs the request-level simulator's benchmark (Release, one thread): 10,000 requests at
# a fixed concurrency and a one-hour trace, against the static serve model in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline_load_bench
build/ridgeline_load_bench .
