#!/usr/bin/env python3
"""Writes the serving run records of dstack's Llama 3.1 405B FP8 benchmark on 8 x H100 SXM5 (vLLM
0.6.3 benchmark_throughput.py: N prompts of fixed lengths offered at once) into
tests/data/runs/published-serve-records.json, replacing any of its earlier records.

usage: scripts/import_dstack_serving.py GIT_DIR
  GIT_DIR: a clone of github.com/dstackai/benchmarks (Apache-2.0) holding commit 85a2fe17
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = os.path.join(ROOT, "tests", "data", "runs", "published-serve-records.json")
COMMIT = "85a2fe177aabe8a5556ce75e791dcd74b1cd8187"  # the last commit touching the comparison folder
FOLDER = "comparison/h100sxm5_vs_mi300x/raw_data/8xH100SXM5-throughput"
KEY = "dstack_llama31_405b_fp8_h100_vllm063"

MODEL = {  # meta-llama/Llama-3.1-405B config.json
    "name": "Llama 3.1 405B (FP8 checkpoint)", "layers": 126, "d_model": 16384, "heads": 128, "kv_heads": 8,
    "head_dim": 128, "d_ff": 53248, "vocab": 128256, "gated_mlp": True, "tied_embeddings": False,
    "attention": "gqa", "moe": None,
}


def git_show(git_dir, path):
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def record(name, doc):
    m = re.fullmatch(r"nvidia-throughput_test_ip(\d+)_op(\d+)_np(\d+)\.json", name)
    input_len, output_len, prompts = (int(g) for g in m.groups())
    if doc["num_requests"] != prompts or doc["total_num_tokens"] != prompts * (input_len + output_len):
        sys.exit(f"{name}: num_requests or total_num_tokens disagree with the file name")
    elapsed_s = doc["elapsed_time"]
    output_tokens_per_s = prompts * output_len / elapsed_s
    return {
        "id": f"dstack-llama3.1-405b-fp8-h100x8-vllm063-{input_len}in-{output_len}out-n{prompts}",
        "kind": "serve",
        "source": {
            "key": KEY,
            "title": "dstackai/benchmarks: Llama3.1-405B-Fp8 inference performance, 8xH100 SXM5 vs 8xMi300x (vLLM), offline throughput",
            "url": f"https://github.com/dstackai/benchmarks/tree/{COMMIT}/comparison/h100sxm5_vs_mi300x",
            "location": f"{FOLDER}/{name} (elapsed_time); the command in the folder's README.md, 'Offline Throughput-Latency Benchmark Results', 8xH100 SXM5",
            "reliability": "A",
        },
        "model": MODEL,
        "hardware": {"accelerator": "h100-sxm", "count": 8, "devices_per_node": 8, "nvlink_domain": 8,
                     "scale_out_Bps_per_device": None, "tpu_slice": None, "num_slices": None},
        "workload": {"seq_len": input_len + output_len, "global_batch_seqs": None, "global_batch_tokens": None,
                     "micro_batch_seqs": None, "input_len": input_len, "output_len": output_len, "concurrency": prompts},
        "plan": {"dp": 1, "tp": 8, "pp": 1, "cp": 1, "ep": 1, "etp": None, "vpp": 1, "sequence_parallel": False,
                 "fsdp": 1, "zero": 0, "recompute": "none", "comm_overlap": None, "kv_cache_dtype": "bf16",
                 "attention_weights_dtype": "bf16"},
        "precision": "fp8",
        "software": {"framework": "vllm", "version": "0.6.3.post2",
                     "note": "vLLM 0.6.3.post2.dev308+gb489fc3c (V0 engine), benchmarks/benchmark_throughput.py --tensor-parallel-size 8 --max-model-len 91680 --num-scheduler-step 1, PyTorch 2.5.1, CUDA graphs on (no --enforce-eager)"},
        "measured": {"tokens_per_s": None, "step_time_s": None, "mfu": None, "tflops_per_device": None,
                     "peak_memory_bytes": None,
                     "output_tokens_per_s": {"value": round(output_tokens_per_s, 3), "status": "derived"}},
        "flops_accounting": "n/a",
        "assumed": ["plan.kv_cache_dtype"],
        "notes": (f"{prompts} prompts of {input_len} tokens, each generating {output_len} (benchmark_throughput's random prompts, "
                  f"ignore_eos), all offered at once: elapsed_time {elapsed_s:.3f} s; output_tokens_per_s derived = "
                  f"{prompts} x {output_len} / elapsed_time (the file's tokens_per_second counts prompt and output tokens). "
                  "kv_cache_dtype: the command gives no --kv-cache-dtype and meta-llama/Llama-3.1-405B-FP8 carries no KV "
                  "scales, so vLLM's 'auto' keeps the cache in bf16. attention_weights_dtype: the checkpoint quantises the "
                  "feed-forward GEMMs only, keeping the attention projections in bf16, and leaves the first and last layers "
                  "whole in bf16 (Llama 3 paper, arXiv 2407.21783, section 6.2, FP8 inference); Ridgeline prices those two "
                  "layers' feed-forward weights in fp8 like the rest (1.6% of them)."),
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    git_dir = sys.argv[1]
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "--name-only", f"{COMMIT}:{FOLDER}"],
                             check=True, capture_output=True, text=True).stdout.split()
    new = [record(n, json.loads(git_show(git_dir, f"{FOLDER}/{n}"))) for n in sorted(listing) if n.startswith("nvidia-throughput_test")]
    new.sort(key=lambda r: (r["workload"]["input_len"], r["workload"]["concurrency"]))
    doc = json.load(open(RECORDS))
    doc["records"] = [r for r in doc["records"] if r["source"]["key"] != KEY] + new
    with open(RECORDS, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(len(new), "records of", KEY, "written to", os.path.relpath(RECORDS, ROOT))


if __name__ == "__main__":
    main()
