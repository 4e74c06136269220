#!/usr/bin/env python3
"""Custom graph topologies at the size limits (4,096 chips; chips x links <= 1.25e8): the time to
load a file (connectivity only) and to load it and route all pairs once (the first collective
over the graph), median of REPEATS runs each, beside each other. Goal: routing <= 2 s.
Usage: topology_bench.py BINARY [REPEATS]"""
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

binary = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def graph_file(folder, name, chips, links):
    level = {"kind": "graph", "name": "g", "chips": chips, "link_bw_Bps_one_way": {"value": 4.5e10, "source": "bench"},
             "hop_latency_s": {"value": 1e-6, "source": "bench"}, "links": links}
    path = os.path.join(folder, name + ".json")
    json.dump({"schema": "ridgeline.topology/1", "name": name, "chip": "tpu-v5e", "levels": [level]}, open(path, "w"))
    return path


def median_s(argv):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


with tempfile.TemporaryDirectory() as folder:
    n = 4096
    cube = [[a, a ^ (1 << b)] for a in range(n) for b in range(12) if a < a ^ (1 << b)]
    rng = random.Random(1)
    ring = {(i, (i + 1) % n) for i in range(n)}
    while len(ring) < 30517:  # the most links 4,096 chips may have: 1.25e8 / 4,096
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b and (a, b) not in ring and (b, a) not in ring:
            ring.add((a, b))
    print(f"{'graph':<40} {'load s':>8} {'load + route s':>15} {'ratio':>7}")
    for name, links in (("hypercube 4096 (24,576 links)", cube), ("random 4096 (30,517 links)", [list(l) for l in ring])):
        path = graph_file(folder, "g", n, links)
        load = median_s([binary, "topology", "--topology", path])
        route = median_s([binary, "collective", "--topology", path, "--op", "alltoall", "--bytes", "1GB"])
        print(f"{name:<40} {load:8.3f} {route:15.3f} {route / load:7.1f}")
