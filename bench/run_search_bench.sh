#!/usr/bin/env bash
# Builds and runs the search benchmark (Release, all cores): plans per second per core on two
# full searches and the ratio against evaluating the same plans one by one through `train`.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline_search_bench
build/ridgeline_search_bench .
