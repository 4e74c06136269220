#!/usr/bin/env bash
# One prepared run on a lent GPU (README, "On a real GPU"): the cuda backend's calibration with its
# held-out validation, then PyTorch's baseline and a LLaMA layer rested and held busy, in the same run.
# Needs .gpu/ from ../shared/tools/gpu-carry.sh. LIKE names the chip file the GPU is (default h100-sxm);
# everything goes under $OUT (or ./gpu-out).
set -u
out=${OUT:-gpu-out}; mkdir -p "$out"
like=${LIKE:-h100-sxm}
export PYTHONUNBUFFERED=1
# gpu-carry.sh packs the data folders it knows; train and serve also read the recomputation policies.
[ -d .gpu/recompute ] || cp -r recompute .gpu/
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.sm,temperature.gpu,memory.total --format=csv > "$out/smi.txt" 2>&1
cat "$out/smi.txt"
start=$(date +%s)
bash .gpu/run.sh calibrate --backend cuda --time-budget "${BUDGET_S:-75}" --validate --like "$like" --json --force \
  -o "$out/$like-cuda.json" > "$out/validate.json" 2> "$out/calibrate.log"
echo "calibrate rc=$? in $(( $(date +%s) - start )) s"; tail -2 "$out/calibrate.log"
start=$(date +%s)
python3 scripts/gpu/torch_baseline.py tests/data/reference/gpu-kernels-h100.json > "$out/torch.json" 2> "$out/torch.log"
echo "torch baseline rc=$? in $(( $(date +%s) - start )) s"
python3 scripts/gpu/torch_sustained.py > "$out/sustained.json" 2>> "$out/torch.log"
echo "torch sustained rc=$? in $(( $(date +%s) - start )) s"; grep -E "sustained|attention|block|rror" "$out/torch.log" | head -20
start=$(date +%s)
python3 scripts/gpu/megatron_table_gemms.py > "$out/table-gemms.json" 2>> "$out/torch.log"
echo "Megatron table GEMMs rc=$? in $(( $(date +%s) - start )) s"; grep -E "TFLOP|rror" "$out/torch.log" | tail -12
start=$(date +%s)
python3 scripts/gpu/decode_breakdown.py > "$out/decode-breakdown.json" 2> "$out/decode-breakdown.log"
echo "decode breakdown rc=$? in $(( $(date +%s) - start )) s"; grep -E "b8 kv1024|rror" "$out/decode-breakdown.log" | tail -3
