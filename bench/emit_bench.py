"""Wall time of `search train` alone and with --emit FRAMEWORK (the best plan written), alternating
runs, medians and their ratio. Usage: emit_bench.py RIDGELINE [REPEATS]."""
import statistics
import subprocess
import sys
import time

SEARCH = ["search", "train", "--model", "llama3-405b", "--hardware", "dgx-h100", "--chips", "8192", "--stack", "torchtitan",
          "--global-batch-tokens", "16777216", "--threads", "1",
          # The space both frameworks can run, given to every variant alike (emitting fixes the
          # framework's rank order when --placement is not given, which would shrink the search).
          "--fsdp", "1", "--zero", "0", "--placement", "tensor,context,expert,fsdp,data,pipeline"]


def wall_s(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    binary, repeats = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7
    # Emitting ranks 32 plans (the best the framework can run may not be the best of all): the
    # report of the same 32 shows what that costs apart from writing.
    variants = {"report": [], "report --top 32": ["--top", "32"], "--emit megatron": ["--emit", "megatron"],
                "--emit torchtitan": ["--emit", "torchtitan"]}
    times = {name: [] for name in variants}
    for _ in range(repeats):
        for name, extra in variants.items():
            times[name].append(wall_s([binary] + SEARCH + extra))
    base = statistics.median(times["report"])
    print(f"search train, llama3-405b on 8,192 H100s, one thread, median of {repeats} (goal: emit within 5% of the report)")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"  {name:20s} {median:8.3f} s   {median / base:5.3f}x")


if __name__ == "__main__":
    main()
