#!/usr/bin/env bash
# Installs what is missing (Debian packages only), then configures and builds Ridgeline in build/.
# Safe to run again: it installs nothing when everything is present and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

# libopenmpi-dev, openmpi-bin: the mpi calibration backend; libopenblas-dev: the GEMM benchmark's baseline.
packages=(build-essential cmake libeigen3-dev libcli11-dev nlohmann-json3-dev libboost-graph-dev doctest-dev
          libopenmpi-dev openmpi-bin libopenblas-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build_dir=${RIDGELINE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
