#!/usr/bin/env bash
# Executes every notebook headless with the given ridgeline binary (default build/ridgeline),
# writes the executed copies and their figures under build/notebooks/ and a Markdown report that
# shows each figure with its question. Fails when a notebook fails or a committed notebook carries
# outputs (they are committed stripped).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/bin:$PATH"  # Debian's python3, which has the notebook packages, before any other
binary=$(realpath "${1:-build/ridgeline}")
out=build/notebooks
rm -rf "$out" && mkdir -p "$out/figures"
python3 - notebooks/*.ipynb <<'PY'
import json, sys
for path in sys.argv[1:]:
    cells = json.load(open(path))["cells"]
    if any(c.get("outputs") or c.get("execution_count") for c in cells if c["cell_type"] == "code"):
        sys.exit(f"{path}: committed with outputs; strip them (jupyter nbconvert --clear-output --inplace {path})")
PY
export RIDGELINE_BIN="$binary" RIDGELINE_FIGURES="$(realpath "$out/figures")" PYTHONPATH="$PWD/notebooks"
for notebook in notebooks/*.ipynb; do
  echo "executing $notebook"
  jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 --output-dir "$out" "$notebook" >/dev/null 2>"$out/nbconvert.log" ||
    { cat "$out/nbconvert.log"; exit 1; }
done
{
  echo "# Ridgeline notebooks: figures of the last run"
  for notebook in notebooks/*.ipynb; do
    name=$(basename "$notebook" .ipynb)
    python3 -c 'import json,sys; print("\n" + "".join(json.load(open(sys.argv[1]))["cells"][0]["source"]).strip().replace("# ", "## ", 1))' "$notebook"
    for figure in "$out/figures/$name"*.png; do
      [ -e "$figure" ] || { echo "$notebook wrote no figure" >&2; exit 1; }
      echo
      echo "![$(cat "${figure%.png}.txt")](figures/$(basename "$figure"))"
    done
  done
} > "$out/REPORT.md"
echo "report: $out/REPORT.md"
