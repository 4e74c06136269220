#!/usr/bin/env python3
"""Writes the serving run records of NVIDIA NIM for LLMs 1.8.0's published benchmarks on H100
(tests/data/runs/tables/nim-llm-benchmarking-1.8.0.json: throughput, mean TTFT and mean ITL at
client concurrencies 1-250) into tests/data/runs/published-serve-records.json, replacing the NIM
records there.

usage: scripts/import_nim_benchmarks.py
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = os.path.join(ROOT, "tests", "data", "runs", "published-serve-records.json")
TABLE = os.path.join(ROOT, "tests", "data", "runs", "tables", "nim-llm-benchmarking-1.8.0.json")
KEY = "nim_llm_benchmarking_1.8.0_h100"
OLD_KEYS = {KEY, "nim_benchmarking_llm_1.0.0"}  # the three rows an earlier session read off the 1.0.0 page

MODELS = {
    "llama-3.3-70b-instruct": ("llama3.3-70b", {  # meta-llama/Llama-3.3-70B-Instruct config.json
        "name": "Llama 3.3 70B Instruct", "layers": 80, "d_model": 8192, "heads": 64, "kv_heads": 8, "head_dim": 128,
        "d_ff": 28672, "vocab": 128256, "gated_mlp": True, "tied_embeddings": False, "attention": "gqa", "moe": None}),
    "llama-3.1-8b-instruct": ("llama3.1-8b", {  # meta-llama/Llama-3.1-8B-Instruct config.json
        "name": "Llama 3.1 8B Instruct", "layers": 32, "d_model": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
        "d_ff": 14336, "vocab": 128256, "gated_mlp": True, "tied_embeddings": False, "attention": "gqa", "moe": None}),
}


def record(row, source):
    short, model = MODELS[row["model"]]
    tp, gpus = row["tp"], row["gpus"]
    ins, outs, c = row["input_tokens"], row["output_tokens"], row["concurrency"]
    latency = lambda ms: {"value": round(ms * 1e-3, 8), "status": "stated", "statistic": "mean"}
    return {
        "id": f"nim18-{short}-fp8-tp{tp}-{ins}in-{outs}out-c{c}",
        "kind": "serve",
        "source": {
            "key": KEY,
            "title": "NVIDIA NIM LLM Benchmarking: Performance (NIM 1.8.0, H100 80GB)",
            "url": source["url"],
            "location": f"{row['model']} results, version 1.8.0, {gpus} x H100 80G, fp8 TP{tp}, {ins} input / {outs} output tokens, "
                        f"concurrency {c}: columns TTFT, ITL and Throughput (transcribed in tests/data/runs/tables/nim-llm-benchmarking-1.8.0.json)",
            "reliability": "A",
        },
        "model": model,
        "hardware": {"accelerator": "h100-sxm", "count": gpus, "devices_per_node": 8, "nvlink_domain": 8,
                     "scale_out_Bps_per_device": None, "tpu_slice": None, "num_slices": None},
        "workload": {"seq_len": ins + outs, "global_batch_seqs": None, "global_batch_tokens": None, "micro_batch_seqs": None,
                     "input_len": ins, "output_len": outs, "concurrency": c},
        "plan": {"dp": gpus // tp, "tp": tp, "pp": 1, "cp": 1, "ep": 1, "etp": None, "vpp": 1, "sequence_parallel": False,
                 "fsdp": 1, "zero": 0, "recompute": "none", "comm_overlap": None},
        "precision": "fp8",
        "software": {"framework": "nim", "version": "1.8.0",
                     "note": "NVIDIA NIM for LLMs 1.8.0 serving the model's FP8 throughput profile, a pre-built TensorRT-LLM engine (engines/nim.json gives the sources); the page gives neither the TensorRT-LLM release nor its scheduler settings, so the engine file takes TensorRT-LLM's defaults and chunked context, without which its 20,000-token prompts could not have run"},
        "measured": {"tokens_per_s": None, "step_time_s": None, "mfu": None, "tflops_per_device": None, "peak_memory_bytes": None,
                     "output_tokens_per_s": {"value": row["throughput_tokens_per_s"], "status": "stated"},
                     "ttft_s": latency(row["ttft_ms"]), "itl_s": latency(row["itl_ms"])},
        "flops_accounting": "n/a",
        "assumed": ["hardware.devices_per_node", "hardware.nvlink_domain", "measured.ttft_s.statistic", "measured.itl_s.statistic"],
        "notes": f"NVIDIA's benchmarking client at a fixed concurrency of {c} (each client sends its next request when the last ends); "
                 "throughput is output tokens/s of the whole run. The GPUs are taken to sit in one 8-GPU HGX node on NVLink. "
                 "The KV cache dtype is not stated; Ridgeline predicts fp8 records with an FP8 cache. "
                 "statistic: the page gives one TTFT and one ITL per row; they are read as means because concurrency x output / "
                 "(TTFT + (output - 1) x ITL) reproduces the stated throughput, as closed-loop means must.",
    }


def main():
    with open(TABLE, encoding="utf-8") as f:
        table = json.load(f)
    with open(RECORDS, encoding="utf-8") as f:
        doc = json.load(f)
    new = [record(row, table["source"]) for row in table["rows"]]
    doc["records"] = new + [r for r in doc["records"] if r["source"]["key"] not in OLD_KEYS]
    with open(RECORDS, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(new)} NIM records written to {os.path.relpath(RECORDS, ROOT)}")


if __name__ == "__main__":
    main()
