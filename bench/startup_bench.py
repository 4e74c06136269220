#!/usr/bin/env python3
"""Startup of the ridgeline binary: wall time and peak resident memory of each command's --help
(the cost of starting, before any work) and of one small real call, beside /bin/true measured in
the same run. Usage: startup_bench.py BINARY [REPEATS]"""
import statistics
import subprocess
import sys
import time

binary = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20


def run(argv):
    """Median wall seconds over `repeats` runs, and the peak resident bytes."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        if subprocess.run(argv, stdout=subprocess.DEVNULL).returncode != 0:
            sys.exit(f"{' '.join(argv)} failed")
        times.append(time.perf_counter() - start)
    # Through /usr/bin/time: a child forked from this Python process would count its pages too.
    timed = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return statistics.median(times), int(timed.stderr.strip().splitlines()[-1]) * 1024


baseline_s, baseline_bytes = run(["/bin/true"])
print(f"/bin/true: {baseline_s * 1e3:.2f} ms, {baseline_bytes / 1e6:.1f} MB resident ({repeats} runs, median)")
print(f"{'command':<72} {'ms':>7} {'x true':>7} {'MB':>6}")
cases = [[c, "--help"] for c in ("models", "model", "train", "serve", "search")] + [
    ["models"],
    ["model", "llama3-70b"],
    ["train", "--model", "llama3-70b", "--hardware", "tpu-v5p", "--chips", "512", "--fsdp", "64", "--tp", "8"],
    ["serve", "--model", "llama3-70b", "--hardware", "h100", "--chips", "8", "--tp", "8", "--batch", "32",
     "--input-len", "2048", "--output-len", "256"],
]
for case in cases:
    seconds, peak = run([binary] + case)
    print(f"{' '.join(case):<72} {seconds * 1e3:7.2f} {seconds / baseline_s:7.1f} {peak / 1e6:6.1f}")
