"""import ridgeline: how long the import takes (beside `import json` in the same run), and what a
call costs on top of the engine: a cheap command (model) called in-process, beside the same
command as a subprocess of the executable. Usage: python_bench.py BUILD_DIR [REPEATS]."""
import os
import statistics
import subprocess
import sys
import time


def import_s(build, module):
    code = "import sys, time; sys.path.insert(0, %r); t = time.perf_counter(); import %s; print(time.perf_counter() - t)" % (
        os.path.join(build, "python"), module)
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def main():
    build = os.path.abspath(sys.argv[1])
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    ours = statistics.median(import_s(build, "ridgeline") for _ in range(repeats))
    base = statistics.median(import_s(build, "json") for _ in range(repeats))
    print("import ridgeline: %.1f ms (goal <= 50 ms); import json in the same run: %.1f ms" % (1e3 * ours, 1e3 * base))

    sys.path.insert(0, os.path.join(build, "python"))
    import ridgeline
    from ridgeline import _core
    calls = 200
    start = time.perf_counter()
    for _ in range(calls):
        _core.run(["model", "--help"])
    tree = (time.perf_counter() - start) / calls
    start = time.perf_counter()
    for _ in range(calls):
        ridgeline.model(model="llama3-8b")
    in_process = (time.perf_counter() - start) / calls
    start = time.perf_counter()
    for _ in range(repeats):
        subprocess.run([os.path.join(build, "ridgeline"), "model", "llama3-8b", "--json"], capture_output=True, check=True)
    executable = (time.perf_counter() - start) / repeats
    print("ridgeline.model(model='llama3-8b'): %.3f ms a call, engine included; the executable for the same: %.2f ms (%.1fx)" % (
        1e3 * in_process, 1e3 * executable, executable / in_process))
    print("  of which the command tree a call builds afresh (a --help call, no engine): %.3f ms (goal: overhead <= 1 ms)" % (1e3 * tree))


if __name__ == "__main__":
    main()
