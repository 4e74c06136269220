#!/usr/bin/env bash
# Fails when the dev-set accuracy the README quotes differs from what scripts/readme-figures.sh
# prints from the build given (default: build), so the README cannot go stale unnoticed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
figures=$(bash scripts/readme-figures.sh "$build")
line=$(grep '^training, dev set:' <<<"$figures")
cv=$(grep -A1 '^cross-validated, dev set:' <<<"$figures"; grep '^  \(held out, source\|LLM Foundry held out whole\|float8 over bf16\)' <<<"$figures" || true)
moe=$(grep -A2 '^MoE training records:' <<<"$figures")
scaling=$(grep -A2 '^scaling series' <<<"$figures" || true)
outside=$(grep "vs OpenXLA's table" <<<"$figures" || true)
serving=$(grep -A2 '^serving records:' <<<"$figures"; grep '^serving [a-z_]* 90% intervals' <<<"$figures")
single=$(awk '/^(single-source runs|runs awaiting a stack)/ {on = 1; print; next} on && /^  / {print; next} {on = 0}' <<<"$figures")
python3 - "$line" "$moe" "$scaling" "$cv" "$outside" "$serving" "$single" <<'PY'
import re, sys
match = re.search(r"(\d+) records, median \|error\| ([\d.]+)%, p90 ([\d.]+)%", sys.argv[1])
if not match:
    sys.exit("readme-figures.sh printed no dev-set line: " + sys.argv[1])
records, median, p90 = match.groups()
readme = " ".join(open("README.md").read().split())  # line breaks are the editor's
quoted = ["(%s modelled records of" % records, "median absolute error of %s%%" % median, "90th percentile of %s%%" % p90]
moe = re.search(r"(\d+) of (\d+) modelled, median \|error\| ([\d.]+)%, p90 ([\d.]+)%", sys.argv[2])
if not moe:
    sys.exit("readme-figures.sh printed no MoE line: " + sys.argv[2])
quoted.append("The %s MoE records modelled of %s give a median of %s%% and a p90 of %s%%" % moe.groups())
quoted += [signed for signed in re.findall(r": ([+-][\d.]+%)", sys.argv[2])]
# Each scaling series: how many points within 5% and its worst, and the strong-scaling pair.
quoted += ["%s of %s points within 5%%" % m for m in re.findall(r"(\d+) of (\d+) points within 5%", sys.argv[3])]
quoted += re.findall(r"([+-][\d.]+%)", sys.argv[3])
# The cross-validated headline, the intervals' coverage and the newest sources held out, as printed.
cv = sys.argv[4].splitlines()
if len(cv) < 2:
    sys.exit("readme-figures.sh printed no cross-validated lines: " + sys.argv[4])
quoted += [" ".join(line.split()) for line in cv]
# The kernel models against a table no block was fitted to.
quoted += [" ".join(line.split()) for line in sys.argv[5].splitlines()]
# Serving: throughput and the latencies under load, as printed.
serving = sys.argv[6].splitlines()
if len(serving) < 6:
    sys.exit("readme-figures.sh printed no serving lines: " + sys.argv[6])
quoted += [" ".join(line.split()) for line in serving]
# The runs that are their source's only record, and those awaiting a stack: never fitted on.
single = sys.argv[7].splitlines()
if len(single) < 2:
    sys.exit("readme-figures.sh printed no single-source lines: " + sys.argv[7])
quoted += [" ".join(line.split()) for line in single]
stale = [text for text in quoted if text not in readme]
if stale:
    sys.exit("README.md is stale; readme-figures.sh prints: " + "; ".join(stale))
print("README.md quotes the current dev-set figures: %s records, %s%% / %s%%" % (records, median, p90))
PY
