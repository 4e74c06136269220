"""--html reports as a person sees them: each kind rendered by headless Chromium (Debian's chromium)
to a PNG, loading with no console message and nothing fetched, its SVG charts holding as many marks
(points, bars) as the command's --json document has things to draw; and --html to a folder that is
not there refused with exit 2 before any work.

usage: test_html.py BUILD_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(sys.argv[1])
RIDGELINE = os.path.join(BUILD, "ridgeline")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = os.path.join(ROOT, "tests/data/runs/published-runs-dev.json")


def chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    sys.exit("chromium is not installed (scripts/bootstrap.sh installs Debian's chromium)")


def render(page, png):
    """Chromium's DOM of the loaded page, its console and network log, and a screenshot."""
    browser = chromium()
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
              "--user-data-dir=" + tempfile.mkdtemp()]
    done = subprocess.run(common + ["--dump-dom", "file://" + page], capture_output=True, text=True, timeout=120)
    shot = subprocess.run(common + ["--window-size=1000,1400", "--screenshot=" + png, "file://" + page], capture_output=True, text=True,
                          timeout=120)
    return done.stdout, done.stderr + shot.stderr


# (name, rings expected (the chosen plan, the critical batch), command, marks expected in each chart;
# both worked out from the --json document)
def train_marks(d):
    return [sum(1 for p in d["breakdown"] if p["time_s"] > 0), 6]  # the parts; five memory parts and the total


def serve_marks(d):
    return [len(d["curve"]["points"])]


def serve_load_marks(d):
    return [2 * len(d["load"]["queue"]["samples"])]  # running and waiting at each sample


def search_marks(d):
    return [len(d["pareto"])]


def scaling_marks(d):
    drawn = sum(1 for p in d["points"] if "plan" in p)
    return [drawn, drawn]  # days to train, and MFU


def serve_search_marks(d):
    return [len(d["pareto"])]


def validation_marks(d):
    return [sum(1 for r in d["records"] if r.get("status") == "ok" and "measured_tokens_per_s" in r)]


CASES = [
    ("train", lambda d: 0, ["train", "--model", "llama3-70b", "--hardware", "dgx-h100", "--chips", "64", "--tp", "8", "--pp", "2"], train_marks),
    ("serve", lambda d: int(d["curve"]["critical_batch_seqs"] in [p["batch_seqs"] for p in d["curve"]["points"]]), ["serve", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "8", "--tp", "8", "--batch", "1..4096", "--input-len", "1024",
               "--output-len", "256"], serve_marks),
    ("serve-load", lambda d: 0, ["serve", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "1", "--input-len", "1024",
                    "--output-len", "256", "--request-rate", "20", "--requests", "400"], serve_load_marks),
    ("search-train", lambda d: 1, ["search", "train", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "16", "--global-batch-tokens",
                      "1048576"], search_marks),
    ("search-scaling", lambda d: 1, ["search", "train", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "16..128", "--global-batch-tokens",
                        "1048576", "--train-tokens", "1e11"], scaling_marks),
    ("search-serve", lambda d: 1, ["search", "serve", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "8", "--input-len", "1024", "--output-len",
                      "256", "--slo-ttft-ms", "500", "--slo-tpot-ms", "50"], serve_search_marks),
    ("validate", lambda d: 0, ["validate", RUNS], validation_marks),
]


def main():
    out = tempfile.mkdtemp(prefix="ridgeline_html_")
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL", what)

    for name, rings_expected, command, marks in CASES:
        page = os.path.join(out, name + ".html")
        done = subprocess.run([RIDGELINE, *command, "--json", "--html", page], capture_output=True, text=True)
        check(done.returncode == 0, "%s: exit %d %s" % (name, done.returncode, done.stderr))
        if done.returncode != 0:
            continue
        document = json.loads(done.stdout)
        expected = marks(document)
        text = open(page).read()
        umask = os.umask(0)
        os.umask(umask)
        mode = os.stat(page).st_mode & 0o777
        check(mode == 0o666 & ~umask, "%s: mode %o, expected %o (shareable, as a plain open makes it)" % (name, mode, 0o666 & ~umask))
        check(len(text.encode()) <= 1_000_000, "%s: %d bytes, over 1 MB" % (name, len(text.encode())))
        # Self-contained: nothing to fetch (the SVG namespace is a name, not a fetch) and no scripts.
        fetched = [u for u in re.findall(r'(?:src|href)\s*=\s*"([^"]+)"', text)]
        check(not fetched and "<script" not in text, "%s: fetches %s or runs a script" % (name, fetched))
        dom, log = render(page, os.path.join(out, name + ".png"))
        console = [line for line in log.splitlines() if "CONSOLE" in line or "Failed to load" in line]
        check(not console, "%s: console: %s" % (name, console))
        charts = re.findall(r"<svg\b.*?</svg>", dom, flags=re.S)
        drawn = [len(re.findall(r'class="mark"', chart)) for chart in charts]
        check(drawn == expected, "%s: marks per chart %s, expected %s" % (name, drawn, expected))
        rings = len(re.findall(r'class="highlight"', dom))
        check(rings == rings_expected(document), "%s: %d rings, expected %d" % (name, rings, rings_expected(document)))
        png = os.path.join(out, name + ".png")
        check(os.path.exists(png) and os.path.getsize(png) > 10_000, "%s: no screenshot" % name)
        print("ok  %s: %d charts, marks %s, %d bytes, %s" % (name, len(charts), drawn, len(text.encode()), png))

    # --html to a missing folder: exit 2 naming --html, before any work (nothing written).
    missing = os.path.join(out, "no-such-folder", "x.html")
    done = subprocess.run([RIDGELINE, "train", "--model", "llama3-70b", "--hardware", "dgx-h100", "--chips", "64", "--html", missing],
                          capture_output=True, text=True)
    check(done.returncode == 2 and "--html" in done.stderr and not done.stdout, "missing folder: exit %d %s" % (done.returncode, done.stderr))
    done = subprocess.run([RIDGELINE, "validate", RUNS, "--compare-published", "--html", os.path.join(out, "c.html")], capture_output=True, text=True)
    check(done.returncode == 2 and "--html" in done.stderr, "compare-published: exit %d" % done.returncode)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
