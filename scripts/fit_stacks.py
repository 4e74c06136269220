#!/usr/bin/env python3
"""Fit each software stack's free parameters (stacks/*.json "fitted") on published training runs,
keeping only what lowers the cross-validated error.

The fitter is the binary's (`ridgeline validate RUNS --cross-validate`, src/validation/stack_fit.cpp):
a coordinate descent over bounded grids of median |error| + 0.5 x p90 |error|, refitted with each
source left out. Parameters are held at no overhead one at a time, in every fit (`--hold`), only
in the fit pooled across families that prices a stack whose family has too few records
(`--hold-pooled`; a family's fit frees what a stack's own would), or only in one family's fits
(`--hold-in-family`, for families of two or more sources: what one code base's runs cannot tell
apart must not be carried to its other sources), the hold that
lowers the cross-validated score most first, until any other would raise it: a parameter is kept
only where fitting it lowers the held-out error (a hold that leaves the score as it was is taken). The holds go to accuracy/fit-policy.json, and the
final fit under them is what is written: a stack with records of its own gets its own fit, one without gets its family's pooled
fit or, with no family records either, the pooled fit of all stacks (never zero overhead). The
held-out residuals go to accuracy/held-out-residuals.json, which every interval is drawn from.

usage: scripts/fit_stacks.py [RUNS] [--ridgeline build/ridgeline] [--write] [--keep-policy | --resume] [--jobs N]
"""
import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARAMS = ["layer_overhead_fraction", "per_step_overhead_s", "rank_time_cv", "sharded_comm_efficiency"]
NEUTRAL = {"layer_overhead_fraction": 0.0, "per_step_overhead_s": 0.0, "rank_time_cv": 0.0, "sharded_comm_efficiency": 1.0}
SERVING_STACKS = {"vllm", "tensorrt-llm"}  # they price serving, never a training step


SCOPES = {"held": "--hold", "held_when_pooled": "--hold-pooled", "held_in_family": "--hold-in-family"}


def cross_validate(ridgeline, runs, hold, residuals=None):
    """hold: {"held": [...], "held_when_pooled": [...], "held_in_family": ["family:parameter", ...]}."""
    command = [os.path.abspath(ridgeline), "validate", os.path.relpath(runs, ROOT), "--cross-validate", "--json"]
    for scope, flag in SCOPES.items():
        for name in hold[scope] or ["none"]:
            command += [flag, name]
    if residuals:
        command += ["--write-residuals", residuals]
    doc = json.loads(subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT).stdout)["cross_validation"]
    overall = doc["overall"]
    return overall["median_abs_error"] + 0.5 * overall["p90_abs_error"], doc


def percent(x):
    return "%.1f%%" % (100 * x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="?", default=os.path.join(ROOT, "tests/data/runs/published-runs-dev.json"))
    parser.add_argument("--ridgeline", default=os.path.join(ROOT, "build/ridgeline"))
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--keep-policy", action="store_true",
                        help="skip the elimination: refit under accuracy/fit-policy.json's holds")
    parser.add_argument("--resume", action="store_true",
                        help="go on with the elimination from accuracy/fit-policy.json's holds and scores")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cross-validations run at once")
    args = parser.parse_args()

    # Backward elimination: each step holds the parameter, in the fit pooled across families only or in every fit,
    # whose holding lowers the cross-validated score most, until any further hold would raise it.
    hold, scores = {scope: [] for scope in SCOPES}, {}
    if args.keep_policy or args.resume:
        policy = json.load(open(os.path.join(ROOT, "accuracy", "fit-policy.json")))
        hold = {scope: policy.get(scope, []) for scope in SCOPES}
        scores = policy.get("scores", {})
    if not args.keep_policy:
        best, doc = cross_validate(args.ridgeline, args.runs, hold)
        if not args.resume:
            scores["nothing held"] = round(best, 4)
        print("fitted: %s; held: %s; cross-validated score (median + 0.5 x p90) %.6f" % (", ".join(PARAMS), hold, best))
    while not args.keep_policy:
        candidates = []
        for name in PARAMS:
            if name in hold["held"]:
                continue
            # The weaker hold first: where the held-out error cannot tell them apart (a stack's own records
            # from one source are never held out from its own fit), a stack keeps what its runs show.
            scopes = ([] if name in hold["held_when_pooled"] else ["held_when_pooled"]) + ["held"]
            for scope in scopes:
                # Held everywhere, a parameter's family holds go: they hold it already.
                trial = {k: [p for p in v if p != name and not (scope == "held" and p.endswith(":" + name))] for k, v in hold.items()}
                trial[scope] = trial[scope] + [name]
                # No optimistic default: the fit pooled across families, which prices a stack with no
                # records of its own or its family's, keeps at least one parameter (never zero overhead).
                if set(trial["held"]) | set(trial["held_when_pooled"]) >= set(PARAMS):
                    continue
                candidates.append((name, scope, trial))
        # A family's own hold: only where the family's records come from two or more sources (else no
        # fold can tell), and only of what its fit fitted rather than borrowed.
        sources = collections.defaultdict(set)
        for r in doc["records"]:
            sources[r["stack_family"]].add(r["source"])
        for family, fit in sorted(doc["family_fits"].items()):
            if len(sources[family]) < 2:
                continue
            for name in PARAMS:
                entry = "%s:%s" % (family, name)
                if name in fit["fitted"] and name not in fit.get("borrowed", {}) and entry not in hold["held_in_family"]:
                    candidates.append((entry, "held_in_family", dict(hold, held_in_family=hold["held_in_family"] + [entry])))
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            runs = list(pool.map(lambda c: cross_validate(args.ridgeline, args.runs, c[2]), candidates))
        trials = []
        for (name, scope, trial), (score, trial_doc) in zip(candidates, runs):
            print("  %s %s: %.6f" % (scope, name, score), flush=True)
            trials.append((score, name, scope, trial, trial_doc))
        # A parameter earns its place only by lowering the held-out error: a hold that leaves the score
        # as it was (the parameter moves no held-out prediction) is taken too.
        if not trials or min(t[0] for t in trials) > best + 1e-9:
            break
        best, name, scope, hold, doc = min(trials, key=lambda t: t[0])
        scores["; ".join("%s: %s" % (k, ", ".join(v)) for k, v in hold.items() if v)] = round(best, 4)
        print("%s: %s; score %.6f" % (scope, name, best), flush=True)
    held = hold["held"]
    residuals = os.path.join(ROOT, "accuracy", "held-out-residuals.json") if args.write else None
    _, doc = cross_validate(args.ridgeline, args.runs, hold, residuals)
    overall, in_sample = doc["overall"], doc["in_sample"]
    runs = os.path.relpath(args.runs, ROOT)
    records = json.load(open(args.runs))["records"]
    today = datetime.date.today().isoformat()
    summary = "cross-validated (leave one source out) median |error| %s, p90 %s on %d records; in sample %s, %s" % (
        percent(overall["median_abs_error"]), percent(overall["p90_abs_error"]), overall["count"],
        percent(in_sample["median_abs_error"]), percent(in_sample["p90_abs_error"]))
    print(summary)
    held_text = "; held at no overhead (fitting them did not lower the cross-validated error): " + ", ".join(held) if held else ""
    pooled_text = ("; a stack's or its family's records only (pooled across families they raised the cross-validated error): " +
                   ", ".join(hold["held_when_pooled"])) if hold["held_when_pooled"] else ""

    if args.write and not args.keep_policy:
        with open(os.path.join(ROOT, "accuracy", "fit-policy.json"), "w") as f:
            json.dump({"schema": "ridgeline.fit-policy/1",
                       "origin": "scripts/fit_stacks.py on %s, %s: backward elimination of the stack parameters on the "
                                 "cross-validated (leave one source out) score, median + 0.5 x p90 |error|; a hold that would leave "
                                 "the fit pooled across families nothing to fit is not tried" % (runs, today),
                       "held": hold["held"], "held_when_pooled": hold["held_when_pooled"],
                       "held_in_family": hold["held_in_family"], "scores": scores}, f, indent=2)
            f.write("\n")

    for file in sorted(os.listdir(os.path.join(ROOT, "stacks"))):
        path = os.path.join(ROOT, "stacks", file)
        stack = json.load(open(path))
        name, family = stack["name"], stack.get("family", stack["name"])
        if name in SERVING_STACKS:
            continue
        if name in doc["fits"]:
            fit, pooled = doc["fits"][name], None
            origin = "fitted by scripts/fit_stacks.py on %s (%d training records of this stack, %d model(s); in sample median |error| %s, p90 %s), %s; %s" % (
                runs, fit["records"], fit["models"], percent(fit["in_sample"]["median_abs_error"]), percent(fit["in_sample"]["p90_abs_error"]),
                today, summary)
        elif family in doc["family_fits"]:
            fit, pooled = doc["family_fits"][family], "family"
            own = sum(r.get("software", {}).get("framework") in [name] + stack.get("aliases", []) for r in records)
            why = ("%d published run(s) of this stack, too few for a fit of its own" % own) if own else "no published run of this stack"
            origin = ("%s: the pooled fit of its family (%s, %d records of %s) by scripts/fit_stacks.py, %s; %s" %
                      (why, family, fit["records"], runs, today, summary))
        else:
            fit, pooled = doc["pooled"], "all"
            origin = ("no published run of this stack or its family: the pooled fit of all stacks (%d records of %s) by scripts/fit_stacks.py, %s; %s" %
                      (fit["records"], runs, today, summary))
        family_held = [p for p in PARAMS if "%s:%s" % (family, p) in hold["held_in_family"]] if pooled != "all" else []
        unfitted = [p for p in PARAMS if p not in fit["fitted"] and p not in held and p not in family_held]
        if unfitted:
            origin += "; not fitted (%s): %s" % ("too few models or no scaling series or no sharded records", ", ".join(unfitted))
        borrowed = fit.get("borrowed", {})
        for source, text in (("family", "its family's fit"), ("pooled", "the pooled fit of all stacks")):
            names = [p for p in PARAMS if borrowed.get(p) == source]
            if names:
                origin += "; from %s, which its own records cannot show: %s" % (text, ", ".join(names))
        if family_held:
            origin += "; held at no overhead in its family's fits (fitting them there raised the cross-validated error): " + ", ".join(family_held)
        fitted = {"origin": origin + held_text + pooled_text}
        if pooled:
            fitted["pooled"] = pooled
        for p in PARAMS:
            value = fit[p] if p not in held and not (pooled == "all" and p in hold["held_when_pooled"]) else NEUTRAL[p]
            if p == "sharded_comm_efficiency" and value == 1.0:
                continue
            fitted[p] = round(value, 4)
        if borrowed:
            fitted["borrowed"] = {p: borrowed[p] for p in PARAMS if p in borrowed and p in fitted}
        print(name, json.dumps({k: v for k, v in fitted.items() if k != "origin"}))
        if args.write:
            stack["fitted"] = fitted
            with open(path, "w") as f:
                json.dump(stack, f, indent=2)
                f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
