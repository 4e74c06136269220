#!/usr/bin/env bash
# Fails when the dev-set accuracy the README quotes differs from what scripts/readme-figures.sh
# prints from the build given (default: build), so the README cannot go stale unnoticed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
line=$(bash scripts/readme-figures.sh "$build" | grep '^training, dev set:')
python3 - "$line" <<'PY'
import re, sys
match = re.search(r"(\d+) records, median \|error\| ([\d.]+)%, p90 ([\d.]+)%", sys.argv[1])
if not match:
    sys.exit("readme-figures.sh printed no dev-set line: " + sys.argv[1])
records, median, p90 = match.groups()
readme = open("README.md").read()
quoted = ["(%s modelled records of" % records, "median absolute error of %s%%" % median, "90th percentile of %s%%" % p90]
stale = [text for text in quoted if text not in readme]
if stale:
    sys.exit("README.md is stale; readme-figures.sh prints: " + "; ".join(stale))
print("README.md quotes the current dev-set figures: %s records, %s%% / %s%%" % (records, median, p90))
PY
