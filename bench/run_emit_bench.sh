#!/usr/bin/env bash
# Builds ridgeline and times the same train search with and without --emit (megatron, torchtitan),
# alternating runs so that load on the host falls on both alike (bench/emit_bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline
python3 bench/emit_bench.py build/ridgeline "${1:-7}"
