#!/usr/bin/env bash
# Builds and runs the GEMM benchmark (Release): the calibration GEMM path (OpenBLAS or Eigen, one thread)
# against OpenBLAS sgemm (one thread) on the same shapes, as ratios measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline_gemm_bench
OPENBLAS_NUM_THREADS=1 build/ridgeline_gemm_bench
