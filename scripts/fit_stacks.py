#!/usr/bin/env python3
"""Fit each software stack's free parameters (stacks/*.json "fitted") on published training runs.

Kernel efficiencies are the chips' and measured (hardware/chips/*.json "kernels"); they are never
refitted here. What no kernel measurement shows is the stack's: the time its framework adds around
each layer's kernels (`layer_overhead_fraction`), once per step (`per_step_overhead_s`), how much
one rank's step time varies (`rank_time_cv`: every rank waits for the slowest) and, where its runs
shard parameters (ZeRO-3 / FSDP), the share of the modelled collective rate its per-layer gathers and
reduce-scatters reach (`sharded_comm_efficiency`). For
every stack with records on chips whose kernels are measured, a coordinate descent over bounded
grids minimises median |error| + 0.5 x p90 |error| of `ridgeline validate` on those records. The
values are written back with their origin.

usage: scripts/fit_stacks.py [RUNS] [--ridgeline build/ridgeline] [--write]
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRIDS = {
    "layer_overhead_fraction": [0.02 * i for i in range(41)],
    "per_step_overhead_s": [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0],
}
# How much one rank's step time varies is what a scaling series shows (the same stack on more and
# more chips): it is fitted on the stack's series only, the overheads on all its records.
CV_GRID = [0.0, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06]
# The share of the collective rate a stack's ZeRO-3 / FSDP traffic reaches: only records that shard
# parameters over links priced at measured shares show it (a fitted collective efficiency holds it
# already); other stacks keep 1 (the key is left out).
SHARDED_GRID = [0.05 + 0.005 * i for i in range(20)] + [0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
SERIES_MIN_CHIP_COUNTS = 3
MIN_RECORDS = 5
# A cost per step and a share of each layer's compute can only be told apart across steps of different
# lengths from different models; records of fewer models leave the per-step cost at 0 (not fitted).
MIN_MODELS_FOR_STEP_OVERHEAD = 3


def copy_data(dest):
    """The data folders `ridgeline --data-dir` reads, copied so that trials can rewrite them."""
    for folder in ("hardware", "models", "strategies", "stacks", "recompute"):
        shutil.copytree(os.path.join(ROOT, folder), os.path.join(dest, folder))


def chips_with_kernels():
    names = set()
    for name in os.listdir(os.path.join(ROOT, "hardware", "chips")):
        chip = json.load(open(os.path.join(ROOT, "hardware", "chips", name)))
        if "kernels" in chip:
            names.add(chip["name"])
            names.update(chip.get("aliases", []))
    return names


def chips_with_measured_links():
    names = set()
    for name in os.listdir(os.path.join(ROOT, "hardware", "chips")):
        chip = json.load(open(os.path.join(ROOT, "hardware", "chips", name)))
        if any(isinstance(link, dict) and "collective_fraction" in link for link in chip.get("interconnect", {}).values()):
            names.add(chip["name"])
            names.update(chip.get("aliases", []))
    return names


def stack_of(software, stacks):
    """The stack `ridgeline validate` runs a record on: framework@version first, then the framework."""
    framework = (software.get("framework") or "").lower()
    for wanted in ("%s@%s" % (framework, (software.get("version") or "").lower()), framework):
        for name, doc in stacks.items():
            if wanted == name or wanted in [a.lower() for a in doc.get("aliases", [])]:
                return name
    return None


def evaluate(ridgeline, data_dir, runs_path):
    out = subprocess.run([ridgeline, "--data-dir", data_dir, "validate", runs_path, "--json"],
                         capture_output=True, text=True, check=True).stdout
    summary = json.loads(out)["summary"]
    return summary["median_abs_error"] + 0.5 * summary["p90_abs_error"], summary


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="?", default=os.path.join(ROOT, "tests/data/runs/published-runs-dev.json"))
    parser.add_argument("--ridgeline", default=os.path.join(ROOT, "build/ridgeline"))
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    runs = json.load(open(args.runs))
    stacks = {f[:-5]: json.load(open(os.path.join(ROOT, "stacks", f))) for f in os.listdir(os.path.join(ROOT, "stacks"))}
    measured = chips_with_kernels()
    measured_links = chips_with_measured_links()
    # The records' accelerator names as the run files spell them (h100-sxm, b200, ...).
    tmp = tempfile.mkdtemp()
    try:
        copy_data(tmp)
        for name in sorted(stacks):
            records = [r for r in runs["records"] if r.get("kind") == "train" and
                       stack_of(r.get("software", {}), stacks) == name and
                       r["hardware"]["accelerator"] in measured]
            if len(records) < MIN_RECORDS:
                continue
            subset = os.path.join(tmp, name + "-runs.json")
            json.dump({**runs, "records": records}, open(subset, "w"))
            # Scaling series: a source's records of this stack on 3 or more chip counts.
            counts = {}
            for r in records:
                counts.setdefault(r["source"]["key"], set()).add(r["hardware"]["count"])
            series_keys = sorted(k for k, c in counts.items() if len(c) >= SERIES_MIN_CHIP_COUNTS)
            series = [r for r in records if r["source"]["key"] in series_keys]
            series_path = os.path.join(tmp, name + "-series.json")
            json.dump({**runs, "records": series}, open(series_path, "w"))
            stack_path = os.path.join(tmp, "stacks", name + ".json")
            doc = json.load(open(stack_path))
            params = dict(doc["fitted"])
            models = {r["model"]["name"] for r in records}
            grids = dict(GRIDS)
            if any((r["plan"].get("fsdp") or 1) > 1 and r["hardware"]["accelerator"] in measured_links for r in records):
                grids["sharded_comm_efficiency"] = SHARDED_GRID
                params.setdefault("sharded_comm_efficiency", 1.0)
            if len(models) < MIN_MODELS_FOR_STEP_OVERHEAD:
                del grids["per_step_overhead_s"]
                params["per_step_overhead_s"] = 0.0
                doc["fitted"] = params
                json.dump(doc, open(stack_path, "w"))
            best, summary = evaluate(args.ridgeline, tmp, subset)
            for _ in range(3):
                improved = False
                for key, grid in grids.items():
                    for value in grid:
                        trial = dict(params, **{key: value})
                        doc["fitted"] = trial
                        json.dump(doc, open(stack_path, "w"))
                        score, s = evaluate(args.ridgeline, tmp, subset)
                        if score < best - 1e-9:
                            best, summary, params, improved = score, s, trial, True
                if series:
                    series_best = None
                    for value in CV_GRID:
                        doc["fitted"] = dict(params, rank_time_cv=value)
                        json.dump(doc, open(stack_path, "w"))
                        score, _ = evaluate(args.ridgeline, tmp, series_path)
                        if series_best is None or score < series_best[0] - 1e-9:
                            series_best = (score, value)
                    if series_best[1] != params["rank_time_cv"]:
                        params = dict(params, rank_time_cv=series_best[1])
                        doc["fitted"] = params
                        json.dump(doc, open(stack_path, "w"))
                        best, summary = evaluate(args.ridgeline, tmp, subset)
                        improved = True
                doc["fitted"] = params
                json.dump(doc, open(stack_path, "w"))
                if not improved:
                    break
            origin = ("fitted by scripts/fit_stacks.py on %s (%d training records of this stack on chips with kernel models: "
                      "median |error| %.1f%%, p90 %.1f%%; rank_time_cv on %s), %s" % (
                          os.path.relpath(args.runs, ROOT), summary["count"], 100 * summary["median_abs_error"], 100 * summary["p90_abs_error"],
                          "the scaling series " + ", ".join(series_keys) + " (%d records)" % len(series) if series else "no scaling series: 0",
                          datetime.date.today().isoformat()))
            if "sharded_comm_efficiency" in grids:
                origin += "; sharded_comm_efficiency on the same records, %d of which shard parameters" % sum(
                    (r["plan"].get("fsdp") or 1) > 1 for r in records)
            if "per_step_overhead_s" not in grids:
                origin += ("; per_step_overhead_s not fitted (0): the records are of %d model(s), too few to tell a per-step "
                           "cost from a share of each layer's" % len(models))
            params["origin"] = origin
            print(name, json.dumps(params))
            # A value on a grid's upper edge means overheads do not explain these records (a scaling
            # collapse, say): nothing is written rather than a bound passed off as a fit.
            # The collective share's bound is its lower edge (1 is the model's own rate).
            edges = [key for key, grid in list(GRIDS.items()) + [("rank_time_cv", CV_GRID)] if params[key] >= grid[-1]]
            if params.get("sharded_comm_efficiency", 1.0) <= SHARDED_GRID[0]:
                edges.append("sharded_comm_efficiency")
            if edges:
                print("  not written: %s at the grid's edge" % ", ".join(edges))
                continue
            if args.write:
                path = os.path.join(ROOT, "stacks", name + ".json")
                out = json.load(open(path))
                out["fitted"] = {"origin": origin, "per_step_overhead_s": params["per_step_overhead_s"],
                                 "layer_overhead_fraction": round(params["layer_overhead_fraction"], 4),
                                 "rank_time_cv": params["rank_time_cv"]}
                if "sharded_comm_efficiency" in grids:
                    out["fitted"]["sharded_comm_efficiency"] = round(params["sharded_comm_efficiency"], 4)
                with open(path, "w") as f:
                    json.dump(out, f, indent=2)
                    f.write("\n")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
