#!/usr/bin/env bash
# Builds ridgeline and times custom graph topologies at the size limits: loading, and loading plus
# the all-pairs routing a first collective runs (bench/topology_bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline
python3 bench/topology_bench.py build/ridgeline "${1:-3}"
