#!/usr/bin/env bash
# Shows that a refactoring changed no behaviour: runs each command of scripts/same-output-commands.txt
# with two builds of ridgeline and compares stdout, stderr and the exit code byte for byte.
# Usage: scripts/same-output.sh OLD_BINARY NEW_BINARY   (e.g. a worktree's build/ridgeline and build/ridgeline)
# Exits 1 naming each command whose output differs; lines starting with '#' are comments.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$1 new=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
differ=0 count=0
while IFS= read -r line; do
    [[ -z "$line" || "$line" == \#* ]] && continue
    count=$((count + 1))
    read -ra args <<< "$line"
    for side in old new; do
        set +e
        "${!side}" "${args[@]}" > "$work/$side.out" 2> "$work/$side.err" < /dev/null
        echo $? > "$work/$side.rc"
        set -e
    done
    # The search's wall-clock time is the one figure that may differ between runs.
    for side in old new; do sed -i -E 's/"elapsed_s": [0-9.e+-]+/"elapsed_s": 0/' "$work/$side.out"; done
    if ! cmp -s "$work/old.out" "$work/new.out" || ! cmp -s "$work/old.err" "$work/new.err" || ! cmp -s "$work/old.rc" "$work/new.rc"; then
        echo "differs: ridgeline $line"
        differ=$((differ + 1))
    fi
done < scripts/same-output-commands.txt
echo "$count commands, $differ differ"
[ "$differ" -eq 0 ]
