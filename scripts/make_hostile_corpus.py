#!/usr/bin/env python3
"""Writes tests/data/hostile/: description files a hostile or careless user might hand Ridgeline, each
broken in one way, and cases.json saying which command reads each and which field the refusal
must name. tests/test_hostile.cpp runs every case: exit 2, file and field named, no NaN, quickly.

usage: scripts/make_hostile_corpus.py   (rewrites the folder from the shipped files)
"""
import copy
import json
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "hostile")


def load(*parts):
    return json.load(open(os.path.join(ROOT, *parts)))


def setpath(doc, path, value):
    keys = path.split(".")
    for k in keys[:-1]:
        doc = doc[int(k)] if isinstance(doc, list) else doc[k]
    last = keys[-1]
    if value is DELETE:
        del doc[last]
    elif isinstance(doc, list):
        doc[int(last)] = value
    else:
        doc[last] = value


DELETE = object()
cases = []


def case(name, base, edits, command, needles, raw=None):
    """`command` holds {file}; `needles` must all appear in the one-line error."""
    path = os.path.join(OUT, name)
    if raw is not None:
        open(path, "w").write(raw)
    else:
        doc = copy.deepcopy(base)
        for key, value in edits:
            setpath(doc, key, value)
        json.dump(doc, open(path, "w"), indent=1)
    cases.append({"file": name, "command": command, "needles": needles})


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    chip = load("hardware", "chips", "h100-sxm.json")
    roof = "roofline --hardware {file} --matmul 64,4096,4096"
    for name, edits, field in [
        ("chip-hbm-bw-denormal.json", [("hbm_bw_Bps.value", 5e-324)], "hbm_bw_Bps"),
        ("chip-hbm-bw-huge.json", [("hbm_bw_Bps.value", 1e300)], "hbm_bw_Bps"),
        ("chip-peak-zero.json", [("peak_flops_per_s.bf16.value", 0)], "peak_flops_per_s.bf16"),
        ("chip-peak-negative.json", [("peak_flops_per_s.bf16.value", -9.89e14)], "peak_flops_per_s.bf16"),
        ("chip-peak-absurd.json", [("peak_flops_per_s.bf16.value", 1e30)], "peak_flops_per_s.bf16"),
        ("chip-hbm-one-byte.json", [("hbm_bytes.value", 1)], "hbm_bytes"),
        ("chip-nvlink-latency-10s.json", [("interconnect.nvlink.hop_latency_s.value", 10)], "hop_latency_s"),
        ("chip-host-link-text.json", [("host_link_Bps.value", "fast")], "host_link_Bps"),
        ("chip-price-absurd.json", [("price_usd_per_chip_hour", {"value": 1e9, "source": "typo"})], "price_usd_per_chip_hour"),
        ("chip-no-hbm.json", [("hbm_bytes", DELETE)], "hbm_bytes"),
        ("chip-clock-absurd.json", [("vector_unit.clock_hz.value", 1e20)], "clock_hz"),
        ("chip-on-chip-absurd.json", [("on_chip_memory_bytes.value", 1e15)], "on_chip_memory_bytes"),
        ("chip-unknown-dtype.json", [("peak_flops_per_s.bf17", {"value": 1e15, "source": "typo"})], "bf17"),
        ("chip-kernel-launch-5s.json", [("kernels.gemm.launch_s", 5)], "kernels.gemm.launch_s"),
        ("chip-kernel-fraction-above-1.json", [("kernels.gemm.dtypes.bf16.peak_fraction", 1.5)], "peak_fraction"),
        ("chip-kernel-no-backward.json", [("kernels.attention.cudnn.backward", DELETE)], "kernels.attention.cudnn.backward"),
        ("chip-kernel-copy-zero.json", [("kernels.memory_bound.copy", 0)], "kernels.memory_bound.copy"),
        ("chip-kernel-floor-unknown.json", [("kernels.memory_bound_floor_s.rmsnorm_fwd_typo", 4e-6)],
         "kernels.memory_bound_floor_s.rmsnorm_fwd_typo"),
        ("chip-kernel-floor-negative.json", [("kernels.memory_bound_floor_s.copy", -1e-6)], "kernels.memory_bound_floor_s.copy"),
        ("chip-output-passes-100.json", [("efficiency.matmul_output_passes", {"value": 100, "source": "typo"})], "matmul_output_passes"),
    ]:
        case(name, chip, edits, roof, [name, field])
    case("chip-deep-nesting.json", None, [], roof, ["chip-deep-nesting.json", "nested deeper"], raw="[" * 200 + "]" * 200)
    case("chip-truncated.json", None, [], roof, ["chip-truncated.json", "malformed JSON"], raw=json.dumps(chip)[:500])

    model = load("models", "llama3-8b.json")
    for name, edits, field in [
        ("model-kv-heads-above-heads.json", [("n_kv_heads", 64), ("n_heads", 16)], "n_kv_heads"),
        ("model-d-model-zero.json", [("d_model", 0)], "d_model"),
        ("model-layers-absurd.json", [("n_layers", 1e13)], "n_layers"),
        ("model-vocab-negative.json", [("vocab_size", -5)], "vocab_size"),
        ("model-layers-3e9.json", [("n_layers", 3000000000)], "n_layers"),
        ("model-d-model-1e12.json", [("d_model", 1000000000000), ("n_heads", 1)], "d_model"),
    ]:
        case(name, model, edits, "model {file}", [name, field])
    qwen2 = load("tests", "data", "hf", "qwen2-config.json")
    case("hf-hidden-size-1e12.json", qwen2, [("hidden_size", 1000000000000), ("num_attention_heads", 1), ("num_key_value_heads", 1)],
         "model {file}", ["hf-hidden-size-1e12.json", "hidden_size", "implausible"])
    windowed = load("models", "gemma2-9b.json")
    for name, edits, field in [
        ("model-window-over-context.json", [("local_attention.tokens", 65536)], "local_attention.tokens"),
        ("model-window-all-global.json", [("local_attention.global_every", 1)], "local_attention.global_every"),
        ("model-window-negative.json", [("local_attention.tokens", -4096)], "local_attention.tokens"),
    ]:
        case(name, windowed, edits, "model {file}", [name, field])
    deepseek = load("models", "deepseek-v3.json")
    for name, edits, field in [
        ("model-node-limit-zero.json", [("moe.routing_groups_per_token", 0)], "moe.routing_groups_per_token"),
        ("model-top-k-above-experts.json", [("moe.top_k", 512)], "moe.top_k"),
        ("model-groups-per-token-above-groups.json", [("moe.routing_groups_per_token", 9)], "moe.routing_groups_per_token"),
    ]:
        case(name, deepseek, edits, "model {file}", [name, field])

    policy = load("recompute", "megatron-lean.json")
    policy_run = "train --model llama3-8b --hardware dgx-h100 --chips 8 --recompute {file}"
    case("recompute-unknown-module.json", policy, [("recompute", ["core_attention", "moe_router"])], policy_run,
         ["recompute-unknown-module.json", "recompute[1]", "moe_router"])
    case("recompute-not-a-list.json", policy, [("recompute", "layer")], policy_run, ["recompute-not-a-list.json", "recompute"])

    strategy = load("strategies", "megatron-3d.json")
    train_with = "train --model llama3-8b --hardware dgx-h100 --chips 8 "
    for name, edits, field in [
        ("strategy-axis-twice.json", [("activations.residual.batch", ["data", "data"])], "activations.residual.batch"),
        ("strategy-axis-two-dims.json", [("activations.residual.seq", ["data"])], "activations.residual"),
        ("strategy-unknown-dim.json", [("weights.qkv.vocab", ["tensor"])], "weights.qkv.vocab"),
        ("strategy-axis-number.json", [("weights.qkv.heads", [7])], "weights.qkv.heads"),
    ]:
        case(name, strategy, edits, train_with + "--strategy {file}", [name, field])

    stack = load("stacks", "pytorch-eager.json")
    case("stack-elementwise-sometimes.json", stack, [("elementwise", "sometimes")], train_with + "--stack {file}",
         ["stack-elementwise-sometimes.json", "elementwise"])
    case("stack-overhead-fraction-5.json", stack, [("fitted.layer_overhead_fraction", 5)], train_with + "--stack {file}",
         ["stack-overhead-fraction-5.json", "fitted.layer_overhead_fraction"])
    case("stack-sharded-share-0.json", stack, [("fitted.sharded_comm_efficiency", 0)], train_with + "--stack {file}",
         ["stack-sharded-share-0.json", "fitted.sharded_comm_efficiency"])
    case("stack-dispatcher-unknown.json", stack, [("moe_dispatchers", ["alltoall", "pigeon"]), ("moe_source", "test")],
         train_with + "--stack {file}", ["stack-dispatcher-unknown.json", "moe_dispatchers"])

    scenario = load("scenarios", "llama3-70b-tpu-v5p-512.json")
    for name, edits, field in [
        ("scenario-model-proc.json", [("model", "/proc/self/environ")], "pseudo-file"),
        ("scenario-unknown-stack.json", [("stack", "nope")], "stack"),
        ("scenario-chips-zero.json", [("chips", 0)], "chips"),
        ("scenario-seq-negative.json", [("seq_len", -2048)], "seq_len"),
        ("scenario-tp-does-not-divide.json", [("plan.tp", 3)], "tp"),
        ("scenario-recompute-unknown.json", [("plan.recompute", "everything")], "plan.recompute"),
        ("scenario-dualpipe-no-pipeline.json", [("plan.schedule", "dualpipe")], "schedule"),
        ("scenario-dispatcher-unknown.json", [("plan.moe_dispatcher", "smoke-signals")], "moe_dispatcher"),
        ("scenario-imbalance-below-one.json", [("plan.expert_imbalance", 0.5)], "expert_imbalance"),
        ("scenario-mtp-negative.json", [("plan.mtp_depth", -1)], "plan.mtp_depth"),
    ]:
        case(name, scenario, edits, "train --scenario {file}", [field])

    runs = load("tests", "data", "runs", "published-runs-dev.json")
    record = next(r for r in runs["records"] if r["hardware"]["accelerator"] == "h100-sxm" and r["model"]["moe"] is None)
    moe_record = next(r for r in runs["records"] if r["model"]["moe"] is not None)
    tpu_record = next(r for r in runs["records"] if r["hardware"]["accelerator"].startswith("tpu"))
    serve_record = load("tests", "data", "runs", "published-serve-records.json")["records"][1]
    one = lambda r: {"schema": runs["schema"], "records": [r]}
    for name, base, edits, field in [
        ("run-kv-heads-above-heads.json", record, [("model.kv_heads", record["model"]["heads"] * 4)], "kv_heads"),
        ("run-plan-product.json", record, [("plan.dp", record["plan"]["dp"] * 3)], "plan.dp"),
        ("run-mfu-above-one.json", record, [("measured.mfu", {"value": 1.5, "status": "stated"})], "mfu"),
        ("run-tpu-with-nvlink.json", tpu_record, [("hardware.nvlink_domain", 8)], "nvlink_domain"),
        ("run-negative-seq.json", record, [("workload.seq_len", -1)], "seq_len"),
        ("run-dispatcher-dense.json", record, [("plan.moe_dispatcher", "deepep")], "moe_dispatcher"),
        ("run-dispatcher-unknown.json", moe_record, [("plan.moe_dispatcher", "carrier-pigeon")], "moe_dispatcher"),
        ("run-recompute-module-unknown.json", moe_record, [("plan.recompute", "selective"), ("plan.recompute_modules", ["core_attn", "everything"])], "recompute_modules"),
        ("run-recompute-modules-full.json", record, [("plan.recompute", "full"), ("plan.recompute_modules", ["core_attn"])], "recompute_modules"),
        ("run-layers-3e9.json", record, [("model.layers", 3000000000)], "model.layers"),
        ("run-serve-input-2.5e9.json", serve_record, [("workload.input_len", 2500000000), ("workload.seq_len", 2500000500)], "workload.seq_len"),
    ]:
        case(name, one(base), [("records.0." + k, v) for k, v in edits], "validate {file}", [name, field])

    topo = load("hardware", "topologies", "hypercube-16.json")
    many_links = [[a, b] for a in range(64) for b in range(64) if a < b] * 3
    case("topology-too-many-links.json", topo, [("levels.0.chips", 64), ("levels.0.links", many_links)],
         "train --model llama3-8b --topology {file}", ["topology-too-many-links.json", "links"])
    case("topology-disconnected.json", topo, [("levels.0.links", [[0, 1], [2, 3]])],
         "train --model llama3-8b --topology {file}", ["topology-disconnected.json", "disconnected"])
    case("topology-bandwidth-absurd.json", topo, [("levels.0.link_bw_Bps_one_way.value", 1e20)],
         "train --model llama3-8b --topology {file}", ["topology-bandwidth-absurd.json", "link_bw_Bps_one_way"])
    case("topology-latency-10s.json", topo, [("levels.0.hop_latency_s.value", 10)],
         "train --model llama3-8b --topology {file}", ["topology-latency-10s.json", "hop_latency_s"])
    case("topology-link-out-of-range.json", topo, [("levels.0.links.0", [0, 99])],
         "train --model llama3-8b --topology {file}", ["topology-link-out-of-range.json", "links[0]"])
    # The largest graph accepted (4,096 chips as a hypercube) under a broken outer level: refused for
    # that field at once, since a graph is routed only when a collective first crosses it.
    cube = [[a, a ^ (1 << bit)] for a in range(4096) for bit in range(12) if a < a ^ (1 << bit)]
    big = copy.deepcopy(topo)
    setpath(big, "levels.0.chips", 4096)
    setpath(big, "levels.0.links", cube)
    big["levels"].append({"kind": "dcn", "slices": 2, "bw_per_chip_Bps_one_way": {"value": -1, "source": "hostile"},
                          "latency_s": {"value": 1e-5, "source": "hostile"}})
    case("topology-4096-chips-bad-outer-level.json", None, [], "train --model llama3-8b --topology {file}",
         ["topology-4096-chips-bad-outer-level.json", "levels[1].bw_per_chip_Bps_one_way"], raw=json.dumps(big, separators=(",", ":")))

    # Operations and power data: what goodput and energy are worked out from.
    system = load("hardware", "systems", "dgx-h100.json")
    outlook = "train --model llama3-8b --hardware {file} --chips 8 --train-tokens 1e12"
    for name, edits, field in [
        ("system-failure-rate-zero.json", [("operations.failures_per_chip_hour.value", 0)], "operations.failures_per_chip_hour"),
        ("system-failure-rate-negative.json", [("operations.failures_per_chip_hour.value", -1e-5)], "operations.failures_per_chip_hour"),
        ("system-storage-zero.json", [("operations.checkpoint_write_Bps_per_host.value", 0)], "operations.checkpoint_write_Bps_per_host"),
        ("system-pue-below-one.json", [("operations.pue.value", 0.9)], "operations.pue"),
        ("system-restart-text.json", [("operations.restart_s.value", "ten minutes")], "operations.restart_s"),
    ]:
        case(name, system, edits, outlook, [name, field])
    case("chip-power-negative.json", chip, [("power.max_w.value", -700)], roof, ["chip-power-negative.json", "power.max_w"])

    # Kernel measurements: what `fit --like` turns into a chip's kernel model.
    kernels = load("tests", "data", "reference", "gpu-kernels-h100.json")
    fit = "fit {file} --like h100-sxm -o hostile-fit-never-written.json"
    for name, edits, field in [
        ("kernels-kv-heads-above-heads.json", [("attention.0.kv_heads", 64)], "attention[0].kv_heads"),
        ("kernels-gemm-negative-time.json", [("gemm.0.seconds", -2e-5)], "gemm[0].seconds"),
        ("kernels-gemm-unknown-dtype.json", [("gemm.3.dtype", "bf17")], "gemm[3].dtype"),
        ("kernels-gemm-huge-dimension.json", [("gemm.1.M", 1e12)], "gemm[1].M"),
        ("kernels-copy-faster-than-hbm.json", [("copy.bytes_moved_per_s_read_plus_write", [9e12])], "copy"),
    ]:
        case(name, kernels, edits, fit, [name, field])

    # Calibration measurements that `fit` turns into a chip: refused on the measurement, before fitting.
    measured = load("tests", "data", "calibration", "small-measurements.json")
    fit_chip = "fit {file} -o hostile-fit-never-written.json"
    for name, edits, field in [
        ("calibration-collective-subnormal.json", [("collectives.0.time_s", 1e-310)], "collectives[0].time_s"),
        ("calibration-copy-instant.json", [("copies.0.time_s", 1e-300)], "copies[0].time_s"),
        ("calibration-gemm-dimension.json", [("gemms.0.m", 1e12)], "gemms[0].m"),
        ("calibration-collective-bytes.json", [("collectives.0.bytes", 1e20)], "collectives[0].bytes"),
    ]:
        case(name, measured, edits, fit_chip, [name, field])

    # Launch files for --from: deep nesting that would overflow a recursive parser, scripts that
    # cannot be read statically.
    train_from = "train --model llama3-8b --hardware dgx-h100 --chips 64 --from "
    case("launch-toml-deep-keys.toml", None, [], train_from + "torchtitan {file}", ["launch-toml-deep-keys.toml", "line 1", "nested"],
         raw="a." * 50000 + "b = 1\n")
    case("launch-shell-deep-substitution.sh", None, [], train_from + "megatron {file}", ["launch-shell-deep-substitution.sh", "nested"],
         raw="X=" + "$(" * 5000 + ")" * 5000 + "\ntorchrun t.py --a $X\n")
    case("launch-shell-deep-defaults.sh", None, [], train_from + "megatron {file}", ["launch-shell-deep-defaults.sh", "nested"],
         raw="X=" + "${A:-" * 5000 + "}" * 5000 + "\ntorchrun t.py --a $X\n")
    case("launch-shell-eval-itself.sh", None, [], train_from + "megatron {file}", ["launch-shell-eval-itself.sh", "eval"],
         raw="E='eval \"$E\"'\neval \"$E\"\n")
    case("launch-shell-unclosed-quote.sh", None, [], train_from + "megatron {file}", ["launch-shell-unclosed-quote.sh", "line 2", "not closed"],
         raw="#!/bin/bash\nTP='8\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP\n")
    case("launch-shell-tp-from-environment.sh", None, [], train_from + "megatron {file}",
         ["launch-shell-tp-from-environment.sh", "--tensor-model-parallel-size", "$TP_SIZE", "environment"],
         raw="#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $TP_SIZE\n")

    json.dump({"description": "hostile inputs: each must be refused with exit 2 naming the file (or flag) and the field",
               "cases": cases}, open(os.path.join(OUT, "cases.json"), "w"), indent=1)
    print(len(cases), "cases written to", os.path.relpath(OUT, ROOT))


if __name__ == "__main__":
    main()
