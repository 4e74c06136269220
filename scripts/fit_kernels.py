#!/usr/bin/env python3
"""Fits a chip's kernel model to kernel measurements (ridgeline.kernel-measurements/1) and prints
the chip file's `kernels` block. Only the measurements decide the numbers: nothing here is tuned
on training runs.

Model (src/engine/kernel_model.cpp is the one that predicts with it):
  GEMM       launch_s + max(flops / (peak[dtype] * peak_fraction * M / (M + half_rows)),
                            bytes / (hbm_bw * hbm_fraction))
  attention  flops / (peak[bf16] * peak_fraction * S / (S + half_seq)), forward and backward apart
  memory     bytes / (hbm_bw * fraction[kernel])

usage: scripts/fit_kernels.py MEASUREMENTS CHIP_FILE  (prints JSON; paste it as "kernels")
"""
import json
import math
import statistics
import sys


def gemm_bytes(g, weight_bytes):
    # Activations in and out at the input's width, as the model counts them (the fp8 cases write
    # bf16: M x N bytes more, negligible where memory bounds them, at M <= 64).
    act = 1.0 if g["dtype"].startswith("fp8") else 2.0
    return (g["M"] * g["K"] + g["M"] * g["N"]) * act + g["K"] * g["N"] * weight_bytes


def gemm_model(g, peak, hbm, launch_s, hbm_fraction, fraction, half_rows):
    flops = 2.0 * g["M"] * g["K"] * g["N"]
    weight_bytes = 1.0 if g["dtype"].startswith("fp8") else 2.0
    compute = flops / (peak * fraction * g["M"] / (g["M"] + half_rows))
    memory = gemm_bytes(g, weight_bytes) / (hbm * hbm_fraction)
    return launch_s + max(compute, memory)


def log_loss(pairs):
    return sum(math.log(p / m) ** 2 for p, m in pairs)


def minimise(loss, start, steps):
    """Coordinate search: each parameter moved by shrinking relative steps while the loss falls."""
    x = list(start)
    best = loss(x)
    for scale in (0.2, 0.05, 0.01, 0.002):
        improved = True
        while improved:
            improved = False
            for i in range(len(x)):
                for sign in (1, -1):
                    trial = list(x)
                    trial[i] = x[i] * (1 + sign * scale * steps[i])
                    value = loss(trial)
                    if value < best:
                        x, best, improved = trial, value, True
    return x


def dtype_key(name):
    return "fp8" if name.startswith("fp8") else name


def main():
    measurements = json.load(open(sys.argv[1]))
    chip = json.load(open(sys.argv[2]))
    peaks = {k: v["value"] for k, v in chip["peak_flops_per_s"].items()}
    hbm = chip["hbm_bw_Bps"]["value"]
    gemms = measurements["gemm"]
    dtypes = sorted({dtype_key(g["dtype"]) for g in gemms})

    # Shared: launch and weight-streaming bandwidth; per dtype: peak fraction and row ramp.
    def unpack(x):
        per = {d: (x[2 + 2 * i], x[3 + 2 * i]) for i, d in enumerate(dtypes)}
        return x[0], x[1], per

    def loss(x):
        launch_s, hbm_fraction, per = unpack(x)
        if launch_s <= 0 or not 0 < hbm_fraction <= 1 or any(not 0 < f <= 1 or h < 0 for f, h in per.values()):
            return float("inf")
        pairs = []
        for g in gemms:
            f, h = per[dtype_key(g["dtype"])]
            pairs.append((gemm_model(g, peaks[dtype_key(g["dtype"])], hbm, launch_s, hbm_fraction, f, h), g["seconds"]))
        return log_loss(pairs)

    start = [5e-6, 0.8] + [0.75, 64.0] * len(dtypes)
    x = minimise(loss, start, [1.0] * len(start))
    launch_s, hbm_fraction, per = unpack(x)

    attention = {}
    for family in sorted({a["kernel"] for a in measurements["attention"]}):
        cases = [a for a in measurements["attention"] if a["kernel"] == family]
        block = {}
        for part in ("forward", "backward"):
            def seconds(a):
                return a["forward_s"] if part == "forward" else a["forward_backward_s"] - a["forward_s"]

            def flops(a):
                fwd = 4.0 * a["batch"] * a["q_heads"] * a["seq"] ** 2 * a["head_dim"] / (2.0 if a["causal"] else 1.0)
                return fwd if part == "forward" else 2.5 * fwd

            def att_loss(y):
                if not 0 < y[0] <= 1 or y[1] < 0:
                    return float("inf")
                return log_loss([(flops(a) / (peaks["bf16"] * y[0] * a["seq"] / (a["seq"] + y[1])), seconds(a)) for a in cases])

            f, h = minimise(att_loss, [0.5, 512.0], [1.0, 1.0])
            block[part] = {"peak_fraction": round(f, 4), "half_seq": round(h, 1)}
        attention[family] = block

    memory = {}
    for kernel in sorted({m["kernel"] for m in measurements["memory_bound"]}):
        rates = [m["bytes_per_s"] for m in measurements["memory_bound"] if m["kernel"] == kernel]
        memory[kernel] = round(statistics.median(rates) / hbm, 4)
    memory["copy"] = round(statistics.mean(measurements["copy"]["bytes_moved_per_s_read_plus_write"]) / hbm, 4)

    block = {
        "source": "fitted by scripts/fit_kernels.py to " + sys.argv[1].split("/")[-1] + " (" +
                  measurements["provenance"]["device"].split(" (")[0] + "; " +
                  measurements["provenance"]["software"].split(" (")[0] + "; " + measurements["provenance"]["date"] + ")",
        "gemm": {
            "launch_s": float("%.3g" % launch_s),
            "hbm_fraction": round(hbm_fraction, 4),
            "dtypes": {d: {"peak_fraction": round(per[d][0], 4), "half_rows": round(per[d][1], 1)} for d in dtypes},
        },
        "attention": attention,
        "memory_bound": memory,
    }
    json.dump(block, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
