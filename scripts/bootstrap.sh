#!/usr/bin/env bash
# Installs what is missing (Debian packages only), then configures and builds Ridgeline in build/.
# Safe to run again: it installs nothing when everything is present and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build and test dependencies: the notebook packages let the test suite execute notebooks/;
# libopenmpi-dev, openmpi-bin: the mpi calibration backend; libopenblas-dev: the GEMM benchmark's baseline.
# time: /usr/bin/time, which the tests read peak resident memory through; python3-jsonschema: the schemas test;
# libyaml-cpp-dev, libtomlplusplus-dev: reading MaxText and torchtitan configurations (train --from); python3-yaml:
# the tests parse emitted MaxText files with PyYAML, as MaxText does; pybind11-dev, python3-dev: import ridgeline;
# chromium: the tests render the --html reports headless.
bash scripts/install-packages.sh build-essential cmake libeigen3-dev libcli11-dev nlohmann-json3-dev libboost-graph-dev \
  doctest-dev python3-matplotlib python3-pandas jupyter-nbconvert python3-ipykernel python3-nbclient \
  libopenmpi-dev openmpi-bin libopenblas-dev time python3-jsonschema libyaml-cpp-dev libtomlplusplus-dev python3-yaml pybind11-dev python3-dev chromium

build_dir=${RIDGELINE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
