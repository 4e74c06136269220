#!/usr/bin/env python3
"""Writes the training run records of NVIDIA NeMo Framework's "Performance Summary" pages (one source per
container release) into tests/data/runs/published-runs-dev.json, replacing any earlier records of those
sources. The rows are transcribed in tests/data/runs/tables/nemo-perf-summary.json with their page.

Each row gives GPUs, GBS, MBS, sequence length, TP/PP/CP/VP/EP, gradient accumulation and tokens/s/GPU;
what a row does not state (the recipe's recompute, overlap, distributed optimizer, the system's scale-out
bandwidth) is the NeMo performance recipes' default of that release and is listed in the record's
`assumed` with why.

usage: scripts/import_nemo_perf_summary.py
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = os.path.join(ROOT, "tests", "data", "runs", "published-runs-dev.json")
TABLE = os.path.join(ROOT, "tests", "data", "runs", "tables", "nemo-perf-summary.json")

# The systems' parts, as run-record fields; the scale-out figure is the vendor's per-GPU NIC (400 Gb/s).
SYSTEMS = {
    "DGX-H100": {"accelerator": "h100-sxm", "devices_per_node": 8, "nvlink_domain": 8},
    "DGX-B200": {"accelerator": "b200", "devices_per_node": 8, "nvlink_domain": 8},
    "DGX-GB200": {"accelerator": "gb200", "devices_per_node": 4, "nvlink_domain": 72},
}
SCALE_OUT_BPS = 5e10


def dense(name, layers, d_model, heads, kv_heads, d_ff, vocab, gated=True, tied=False):
    return {"name": name, "layers": layers, "d_model": d_model, "heads": heads, "kv_heads": kv_heads,
            "head_dim": d_model // heads, "d_ff": d_ff, "vocab": vocab, "gated_mlp": gated, "tied_embeddings": tied,
            "attention": "mha" if kv_heads == heads else "gqa", "moe": None}


def mixtral(name, layers, d_model, heads, d_ff, vocab):
    m = dense(name, layers, d_model, heads, 8, d_ff, vocab)
    m["moe"] = {"experts": 8, "top_k": 2, "d_ff_expert": d_ff, "shared_experts": 0, "dense_layers": 0, "layer_freq": 1}
    return m


# The table's model names, with the configuration NeMo 2.0's recipes build (nemo/collections/llm/gpt/model/*.py).
MODELS = {
    "GPT3-175B": (dense("GPT-3 175B (NeMo config)", 96, 12288, 96, 96, 49152, 51200, gated=False, tied=True),
                  "NeMo GPTConfig175B (vocab 51200, shared input and output embeddings)"),
    "LLAMA3-8B": (dense("Llama 3/3.1 8B", 32, 4096, 32, 8, 14336, 128256), "Meta Llama 3 8B config.json"),
    "LLAMA3-70B": (dense("Llama 3/3.1 70B", 80, 8192, 64, 8, 28672, 128256), "Meta Llama 3 70B config.json"),
    "LLAMA3-405B": (dense("Llama 3/3.1 405B", 126, 16384, 128, 8, 53248, 128256), "Meta Llama 3.1 405B config.json"),
    "Nemotron-15B": (dense("Nemotron-4 15B", 32, 6144, 48, 8, 24576, 256000, gated=False),
                     "NeMo Nemotron4Config15B (squared-ReLU MLP, untied)"),
    "Nemotron-340B": (dense("Nemotron-4 340B", 96, 18432, 96, 8, 73728, 256000, gated=False),
                      "NeMo Nemotron4Config340B (squared-ReLU MLP, untied)"),
    "Mixtral-8x7B": (mixtral("Mixtral 8x7B", 32, 4096, 32, 14336, 32000), "mistralai/Mixtral-8x7B-v0.1 config.json"),
    "Mixtral-8x22B": (mixtral("Mixtral 8x22B", 56, 6144, 48, 16384, 32768), "mistralai/Mixtral-8x22B-v0.1 config.json"),
}
MODELS["LLAMA3.1-405B"] = MODELS["LLAMA3-405B"]


def flops_per_token(m, seq_len, causal):
    """6 x the matmul parameters a token meets (active experts, router, output layer) plus attention."""
    d, qd = m["d_model"], m["heads"] * m["head_dim"]
    kvd = m["kv_heads"] * m["head_dim"]
    attn = d * (2 * qd + 2 * kvd)
    mats = 3 if m["gated_mlp"] else 2
    moe = m["moe"]
    mlp = mats * d * m["d_ff"] * (moe["top_k"] if moe else 1) + (d * moe["experts"] if moe else 0)
    n = m["layers"] * (attn + mlp) + d * m["vocab"]
    scores = 12 * m["layers"] * seq_len * qd * (0.5 if causal else 1.0)
    return 6 * n + scores


def record(row, source):
    name = row["model"]
    if name not in MODELS:
        sys.exit(f"{TABLE}: row {row['raw']!r}: no model configuration for {name!r}")
    model, model_origin = MODELS[name]
    system = SYSTEMS[row["system"]]
    gpus, tp, pp, cp, ep = row["gpus"], row["tp"], row["pp"], row["cp"], row["ep"]
    if gpus % (tp * pp * cp):
        sys.exit(f"{TABLE}: row {row['raw']!r}: tp x pp x cp does not divide the GPUs")
    dp = gpus // (tp * pp * cp)
    gbs, mbs = row["gbs"], row["mbs"]
    fix = row.get("batch_correction")
    if fix:
        gbs, mbs = fix["gbs"], fix["mbs"]
    if gbs % (mbs * dp) or gbs // (mbs * dp) != row["ga"]:
        sys.exit(f"{TABLE}: row {row['raw']!r}: GA is not GBS / (MBS x DP) = {gbs} / ({mbs} x {dp})")
    fsdp = bool(row.get("fsdp"))
    tokens_per_s = row["tokens_per_s_per_gpu"] * gpus
    batch_tokens = gbs * row["seq_len"]
    notes = [f"model dims from: {model_origin}",
             f"tokens_per_s = stated tokens/s/GPU {row['tokens_per_s_per_gpu']} x {gpus} GPUs; step_time_s = global_batch_tokens / tokens_per_s",
             "scale-out bandwidth is the vendor spec for this system (400 Gb/s NIC per GPU), not restated by the source",
             "zero: distributed optimizer (NeMo performance recipes' default)"
             + ("; FSDP column 1: Megatron-Core's FSDP shards parameters over the data-parallel ranks" if fsdp else ""),
             "recompute: the release's performance recipes set recompute_layers 0 for pre-training "
             "(scripts/performance/recommended_model_configs/*.csv at NVIDIA/NeMo v2.3.0)",
             "comm_overlap: NeMo performance recipes overlap DP grad-reduce/param-gather (and TP comm where TP>1)",
             f"precision detail: {row['precision_note']}",
             f"source row: {row['raw']}"]
    assumed = ["hardware.scale_out_Bps_per_device", "plan.zero", "plan.recompute", "plan.comm_overlap"]
    if model["moe"]:
        notes.append("etp: 1, as the release's performance recipes set expert_tensor_parallel_size (model_configs_*.csv etp_size)")
        assumed.append("plan.etp")
    if row.get("tflops_note"):
        notes.append(row["tflops_note"])
    if fix:
        notes.insert(0, f"INCONSISTENT: GBS {row['gbs']} and MBS {row['mbs']} as printed; kept GBS {gbs}, MBS {mbs}: {fix['why']}")
        assumed += ["workload.global_batch_seqs", "workload.micro_batch_seqs"]
    measured_tflops = row.get("model_tflops_per_gpu")
    accounting = "unknown"
    if measured_tflops:
        # The source's own FLOP count: whichever closed form its TFLOP/s and tokens/s agree with.
        fits = {f"6N+{kind}-attn": abs(flops_per_token(model, row["seq_len"], kind == "causal") * row["tokens_per_s_per_gpu"] / 1e12
                                      / measured_tflops - 1) for kind in ("full", "causal")}
        accounting, gap = min(fits.items(), key=lambda kv: kv[1])
        notes.append(f"accounting check: stated TFLOP/s and tokens/s agree with the {accounting} closed form within {100 * gap:.1f}%")
        if gap > 0.05:
            accounting = "unknown"
    short = {"DGX-H100": "h100", "DGX-B200": "b200", "DGX-GB200": "gb200"}[row["system"]]
    return {
        "id": f"nemo{row['container'].replace('.', '')}-{name}-{short}-{gpus}gpu",
        "kind": "train",
        "source": source,
        "model": model,
        "hardware": {**system, "count": gpus, "scale_out_Bps_per_device": SCALE_OUT_BPS, "tpu_slice": None, "num_slices": None},
        "workload": {"seq_len": row["seq_len"], "global_batch_seqs": gbs, "global_batch_tokens": batch_tokens,
                     "micro_batch_seqs": mbs},
        "plan": {"dp": dp, "tp": tp, "pp": pp, "cp": cp, "ep": ep, "etp": 1 if model["moe"] else None,
                 "vpp": row["vp"] if pp > 1 else 1, "sequence_parallel": tp > 1, "fsdp": dp * cp if fsdp else 1,
                 "zero": 3 if fsdp else 1, "recompute": "none", "comm_overlap": True},
        "precision": "fp8",
        "software": {"framework": "nemo", "version": row["container"],
                     "note": "NeMo 2.0 performance recipes: Megatron-Core with Transformer Engine"},
        "measured": {"tokens_per_s": {"value": tokens_per_s, "status": "derived"},
                     "step_time_s": {"value": round(batch_tokens / tokens_per_s, 6), "status": "derived"},
                     "mfu": None,
                     "tflops_per_device": {"value": measured_tflops, "status": "stated"} if measured_tflops else None,
                     "peak_memory_bytes": None, "output_tokens_per_s": None},
        "flops_accounting": accounting,
        "assumed": assumed,
        "notes": "; ".join(notes),
    }


def main():
    table = json.load(open(TABLE))
    records = []
    for row in table["rows"]:
        key = f"nemo_perf_summary_{row['container']}"
        source = {"key": key, "title": f"NVIDIA NeMo Framework docs 'Performance Summary' (NeMo {row['container']} container, FP8 pre-training)",
                  "url": row["url"], "location": f"Pre-training table, system {row['system']}", "reliability": "A"}
        records.append(record(row, source))
    keys = {r["source"]["key"] for r in records}
    doc = json.load(open(RECORDS))
    kept = [r for r in doc["records"] if r["source"]["key"] not in keys]
    ids = [r["id"] for r in kept + records]
    if len(ids) != len(set(ids)):
        sys.exit("duplicate record ids")
    doc["records"] = kept + records
    with open(RECORDS, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(records)} records of {', '.join(sorted(keys))} written; {len(kept)} others kept")


if __name__ == "__main__":
    main()
