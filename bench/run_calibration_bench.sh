#!/usr/bin/env bash
# Builds Ridgeline (Release) and runs a full validated calibration on this host with the cpu
# backend (2 devices) and, where MPI was built, the mpi backend (2 ranks): held-out sharded
# matmuls and MLP blocks predicted by the fitted description against their measured times.
# Goal: median |error| <= 10% and max |error| <= 25% on each backend.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline
out=${RIDGELINE_BENCH_DIR:-build/calibration-bench}
mkdir -p "$out"
budget=${1:-90}
status=0
check() {  # backend, validation JSON
  python3 - "$1" "$2" <<'PY' || status=1
import json, sys
backend, path = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
s = doc["summary"]
for c in doc["cases"]:
    print(f"  {c['name']:<44} {c['bound']:<13} predicted {c['predicted_s']*1e3:9.3f} ms  measured {c['measured_s']*1e3:9.3f} ms  error {100*c['error']:+6.1f}%")
bounds = sorted({c["bound"] for c in doc["cases"]})
devices = sorted({c["devices"] for c in doc["cases"]})
ok = s["median_abs_error"] <= 0.10 and s["max_abs_error"] <= 0.25
print(f"{backend}: {s['count']} held-out cases (devices {devices}, bounds {bounds}): "
      f"median |error| {100*s['median_abs_error']:.1f}% (goal <= 10%), max |error| {100*s['max_abs_error']:.1f}% (goal <= 25%): "
      + ("met" if ok else "NOT met"))
sys.exit(0 if ok else 1)
PY
}
echo "cpu backend, 2 devices, ${budget}s budget"
build/ridgeline calibrate --backend cpu --devices 2 --time-budget "$budget" --validate --json --quiet \
  -o "$out/cpu.json" > "$out/cpu-validation.json"
check cpu "$out/cpu-validation.json"
if command -v mpirun >/dev/null && build/ridgeline calibrate --backend mpi --devices 1 --time-budget 1 --quiet \
     -o "$out/probe.json" >/dev/null 2>&1; then
  echo "mpi backend, 2 ranks, ${budget}s budget"
  mpirun --allow-run-as-root --oversubscribe -np 2 build/ridgeline calibrate --backend mpi --devices 2 \
    --time-budget "$budget" --validate --json --quiet -o "$out/mpi.json" > "$out/mpi-validation.json"
  check mpi "$out/mpi-validation.json"
else
  echo "mpi backend: not built (no MPI at configure time)"
fi
exit $status
