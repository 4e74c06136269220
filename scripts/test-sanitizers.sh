#!/usr/bin/env bash
# Builds Ridgeline with AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/ and runs the
# whole test suite there; any finding fails the run. Expects scripts/bootstrap.sh to have installed
# the dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DRIDGELINE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure
