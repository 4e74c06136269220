#!/usr/bin/env bash
# Builds ridgeline and its Python package and times the import and a call (bench/python_bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline ridgeline_python
/usr/bin/python3 bench/python_bench.py build "${1:-20}"
