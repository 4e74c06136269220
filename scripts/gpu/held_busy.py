"""What both GPU scripts share: the SM clock and board power (NVML), and a call repeated back to back
for a while, timed in windows of ~0.25 s with the clock read while each window's kernels run."""
import statistics
import time

import torch

try:
    import pynvml
    pynvml.nvmlInit()
    NVML = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:  # the times still stand without the clock readings
    NVML = None


def clocks():
    """(SM clock in MHz, board power in W), or (None, None) without NVML."""
    if NVML is None:
        return None, None
    return pynvml.nvmlDeviceGetClockInfo(NVML, pynvml.NVML_CLOCK_SM), pynvml.nvmlDeviceGetPowerUsage(NVML) / 1000.0


def event_s(fn):
    """One call of fn, timed with CUDA events around it on the current stream."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e-3


def windows(fn, call_s, seconds):
    """Runs fn back to back for `seconds`; per window: seconds per call, SM clock, board power."""
    per_window = max(1, int(0.25 / call_s))
    out = []
    start = time.time()
    while time.time() - start < seconds:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(per_window):
            fn()
        b.record()
        time.sleep(0.1)  # read the clock while the window's kernels run
        sm_mhz, watts = clocks()
        b.synchronize()
        out.append({"t_s": round(time.time() - start, 2), "s": a.elapsed_time(b) * 1e-3 / per_window, "sm_mhz": sm_mhz, "watts": watts})
    return out


def rested_then_held(fn, rested_calls, seconds):
    """fn timed from a rested GPU (each call after 0.5 s idle), then held busy back to back for
    `seconds`: the held time per call is the median of the last 60% of windows (the clock settles)."""
    rested = []
    for _ in range(rested_calls):
        time.sleep(0.5)
        rested.append(event_s(fn))
    held = windows(fn, statistics.median(rested), seconds)
    tail = held[len(held) * 2 // 5:]
    return {"rested_s": statistics.median(rested), "rested_samples_s": rested, "held_s": statistics.median(w["s"] for w in tail),
            "sm_mhz": statistics.median(w["sm_mhz"] for w in tail) if NVML else None,
            "watts": statistics.median(w["watts"] for w in tail) if NVML else None, "windows": held}
