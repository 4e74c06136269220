"""Two builds of ridgeline on the same training searches: CPU seconds (user + system, best of
REPEATS), plans evaluated and plans that fit (costed in full), and CPU per plan, with new/old ratios.
A build may search more or fewer plans than another: the CPU per plan separates that from speed.

usage: search_versus.py OLD_BINARY NEW_BINARY [REPEATS]
"""
import json
import os
import resource
import subprocess
import sys

SEARCHES = [
    "search train --model gpt3-175b --hardware dgx-a100 --chips 1024 --seq-len 2048 --global-batch-seqs 1536 --top 5",
    "search train --model gpt3-175b --hardware dgx-a100 --chips 128 --seq-len 2048 --global-batch-seqs 1536 --top 5",
]


def run(binary, arguments, repeats):
    """Best CPU seconds of `repeats` runs, and the search's counts."""
    best, counts = float("inf"), None
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([binary] + arguments.split() + ["--json"], check=True, capture_output=True, text=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = min(best, cpu)
        doc = json.loads(out)
        counts = (doc["plans_evaluated"], doc["plans_valid"])
    return best, counts


def main():
    old, new = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    print(f"old: {old}\nnew: {new}\nbest of {repeats}, CPU seconds over all threads ({os.cpu_count()} cores)\n")
    for arguments in SEARCHES:
        print(arguments)
        rows = {}
        for name, binary in (("old", old), ("new", new)):
            cpu, (evaluated, valid) = run(binary, arguments, repeats)
            rows[name] = (cpu, evaluated, valid)
            print(f"  {name}: {cpu:7.2f} CPU-s  {evaluated:>12,} plans  {valid:>12,} fit  "
                  f"{cpu / evaluated * 1e9:7.1f} ns/plan  {cpu / valid * 1e9:7.1f} ns/fitting plan")
        (oc, oe, ov), (nc, ne, nv) = rows["old"], rows["new"]
        print(f"  new/old: CPU {nc / oc:.2f}x, plans {ne / oe:.2f}x, fitting plans {nv / ov:.2f}x, "
              f"CPU per plan {(nc / ne) / (oc / oe):.2f}x, per fitting plan {(nc / nv) / (oc / ov):.2f}x\n")


if __name__ == "__main__":
    main()
