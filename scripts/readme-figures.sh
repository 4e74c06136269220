#!/usr/bin/env bash
# Prints the figures the README quotes, from the current build: validation accuracy on the dev
# set and the serving records, and the sharding derivation against XLA's partitioner.
# Speed figures come from bench/run_search_bench.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
summary() {
  "$build/ridgeline" validate "$1" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]
part = s if sys.argv[1] == "train" else s["serve"]
print("%s: %d records, median |error| %.2f%%, p90 %.2f%%" %
      (sys.argv[2], part["count"], 100 * part["median_abs_error"], 100 * part["p90_abs_error"]))
' "$2" "$3"
}
summary tests/data/runs/published-runs-dev.json train "training, dev set"
summary tests/data/runs/published-serve-records.json serve "serving records"
"$build/tests/ridgeline_tests" -sf='*xla_collectives*' -s 2>&1 | grep -o 'XLA comparison:.*' || true
"$build/tests/ridgeline_tests" -sf='*kernel_model*' -s 2>&1 | grep -o 'H100 \(GEMMs\|attention passes\|grouped GEMMs\):.*' || true
# Training records by where their kernel times come from (measured kernels or a fitted efficiency block).
"$build/ridgeline" validate tests/data/runs/published-runs-dev.json --json | python3 -c '
import json, statistics, sys
records = json.load(open("tests/data/runs/published-runs-dev.json"))["records"]
accelerator = {r["id"]: r["hardware"]["accelerator"] for r in records}
errors = {"measured": [], "fitted": []}
for p in json.load(sys.stdin)["records"]:
    if p.get("error") is not None:
        errors["measured" if accelerator[p["id"]] in ("h100-sxm", "h200") else "fitted"].append(abs(p["error"]))
for kind, e in errors.items():
    e.sort()
    print("training records on chips with %s kernels: %d, median |error| %.2f%%, p90 %.2f%%" %
          (kind, len(e), 100 * statistics.median(e), 100 * e[int(0.9 * (len(e) - 1))]))
'
