#!/usr/bin/env bash
# Builds ridgeline and prints how long each command takes to start, and how much memory it holds,
# beside /bin/true's (bench/startup_bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline
python3 bench/startup_bench.py build/ridgeline "${1:-20}"
