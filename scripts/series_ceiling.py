#!/usr/bin/env python3
"""The closest a stack's fitted parameters can bring one scaling series, point by point.

scripts/fit_stacks.py fits a stack's three run-fitted parameters (per-step overhead, layer overhead,
rank_time_cv) on all its records. This scans the same grids on one series alone and prints the
setting whose worst point is smallest: if even that misses a per-point target, no fit reaches it and
what is left is the model (or the series' unstated settings), not the fit.

usage: scripts/series_ceiling.py STACK SOURCE_KEY [RUNS] [--ridgeline build/ridgeline]
"""
import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile

from fit_stacks import CV_GRID, GRIDS, ROOT, copy_data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("stack")
    parser.add_argument("source_key")
    parser.add_argument("runs", nargs="?", default=os.path.join(ROOT, "tests/data/runs/published-runs-dev.json"))
    parser.add_argument("--ridgeline", default=os.path.join(ROOT, "build/ridgeline"))
    args = parser.parse_args()

    runs = json.load(open(args.runs))
    series = [r for r in runs["records"] if r["source"]["key"] == args.source_key]
    if not series:
        sys.exit("no records of source %s in %s" % (args.source_key, args.runs))
    tmp = tempfile.mkdtemp()
    try:
        copy_data(tmp)
        series_path = os.path.join(tmp, "series.json")
        json.dump({**runs, "records": series}, open(series_path, "w"))
        stack_path = os.path.join(tmp, "stacks", args.stack + ".json")
        doc = json.load(open(stack_path))
        best = None
        for step_s, layer, cv in itertools.product(GRIDS["per_step_overhead_s"], GRIDS["layer_overhead_fraction"], CV_GRID):
            doc["fitted"] = dict(doc["fitted"], per_step_overhead_s=step_s, layer_overhead_fraction=layer, rank_time_cv=cv)
            json.dump(doc, open(stack_path, "w"))
            out = subprocess.run([args.ridgeline, "--data-dir", tmp, "validate", series_path, "--json"],
                                 capture_output=True, text=True, check=True).stdout
            errors = {p["id"]: p["error"] for p in json.loads(out)["records"] if p.get("error") is not None}
            worst = max(abs(e) for e in errors.values())
            if best is None or worst < best[0]:
                best = (worst, step_s, layer, cv, errors)
    finally:
        shutil.rmtree(tmp)
    worst, step_s, layer, cv, errors = best
    print("%s on %s (%d points): the best worst point any fit reaches is %.1f%% "
          "(per_step_overhead_s %g, layer_overhead_fraction %.2f, rank_time_cv %g)" %
          (args.stack, args.source_key, len(errors), 100 * worst, step_s, layer, cv))
    for name, error in errors.items():
        print("  %s: %+.1f%%" % (name, 100 * error))


if __name__ == "__main__":
    main()
