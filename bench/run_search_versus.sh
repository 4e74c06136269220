#!/usr/bin/env bash
# The training search of this build beside an earlier commit's (default de00be6), both built here
# and run in the same session: CPU seconds, how many plans each costs, and CPU per plan, with the
# ratios (bench/search_versus.py). The earlier build lives in build-<rev>/ beside a worktree of it.
set -euo pipefail
cd "$(dirname "$0")/.."
REV="${1:-de00be6}"
REPEATS="${2:-3}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target ridgeline
WORKTREE="build-$REV/source"
if [ ! -d "$WORKTREE" ]; then
  mkdir -p "build-$REV"
  git worktree add --detach "$WORKTREE" "$REV" >/dev/null
fi
cmake -S "$WORKTREE" -B "build-$REV/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "build-$REV/build" -j "$(nproc)" --target ridgeline
python3 bench/search_versus.py "build-$REV/build/ridgeline" build/ridgeline "$REPEATS"
