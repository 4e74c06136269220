#!/usr/bin/env bash
# Builds Ridgeline with AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/ and runs the
# whole test suite there; any finding fails the run. Expects scripts/bootstrap.sh to have installed
# the dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DRIDGELINE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$(nproc)"
# The README's figures are the release build's (the cross-validation they run takes ~20 min sanitized);
# the cross-validation code runs sanitized in its own tests, on a subset.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -E '^readme_figures$' 
