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
        ("run-recompute-policy-unknown.json", record, [("plan.recompute", "selective"), ("plan.recompute_policy", "maxtext-everything")], "recompute_policy"),
        ("run-recompute-policy-level.json", record, [("plan.recompute", "full"), ("plan.recompute_policy", "maxtext-minimal")], "recompute_policy"),
        ("run-recompute-policy-none.json", record, [("plan.recompute", "none"), ("plan.recompute_policy", "full")], "recompute_policy"),
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

    round_three()

    json.dump({"description": "hostile inputs: each must be refused with exit 2 naming the file (or flag) and the field",
               "cases": cases}, open(os.path.join(OUT, "cases.json"), "w"), indent=1)
    print(len(cases), "cases written to", os.path.relpath(OUT, ROOT))


def round_three():
    """Issue 43's third round: every reader and flag family gets its absurd, missing and mistyped cases."""
    serve = "serve --model llama3-8b --hardware dgx-h100 --chips 1 --input-len 512 --output-len 128 "

    # Engine files: the scheduler a load simulation runs.
    engine = load("engines", "vllm.json")
    for name, edits, field in [
        ("engine-max-seqs-zero.json", [("scheduler.max_seqs.value", 0)], "scheduler.max_seqs"),
        ("engine-max-seqs-huge.json", [("scheduler.max_seqs.value", 1e12)], "scheduler.max_seqs"),
        ("engine-max-seqs-fraction.json", [("scheduler.max_seqs.value", 7.5)], "scheduler.max_seqs"),
        ("engine-token-budget-negative.json", [("scheduler.max_batched_tokens.value", -8192)], "scheduler.max_batched_tokens"),
        ("engine-chunk-zero.json", [("scheduler.prefill_chunk_tokens.value", 0)], "scheduler.prefill_chunk_tokens"),
        ("engine-block-zero.json", [("scheduler.kv_block_tokens.value", 0)], "scheduler.kv_block_tokens"),
        ("engine-block-huge.json", [("scheduler.kv_block_tokens.value", 1e9)], "scheduler.kv_block_tokens"),
        ("engine-memory-fraction-zero.json", [("scheduler.kv_memory_fraction.value", 0)], "scheduler.kv_memory_fraction"),
        ("engine-memory-fraction-above-one.json", [("scheduler.kv_memory_fraction.value", 1.5)], "scheduler.kv_memory_fraction"),
        ("engine-memory-basis-disk.json", [("scheduler.kv_memory_basis.value", "disk")], "scheduler.kv_memory_basis"),
        ("engine-admission-lottery.json", [("scheduler.kv_admission.value", "lottery")], "scheduler.kv_admission"),
        ("engine-chunked-prefill-text.json", [("scheduler.chunked_prefill.value", "yes")], "scheduler.chunked_prefill"),
        ("engine-knob-no-source.json", [("scheduler.max_seqs.source", DELETE)], "scheduler.max_seqs"),
        ("engine-knob-missing.json", [("scheduler.kv_block_tokens", DELETE)], "scheduler.kv_block_tokens"),
        ("engine-schema-wrong.json", [("schema", "ridgeline.engine/9")], "schema"),
        ("engine-scheduler-list.json", [("scheduler", [1, 2])], "scheduler"),
    ]:
        case(name, engine, edits, serve + "--concurrency 4 --requests 20 --engine {file}", [name, field])

    # Traces: JSON Lines of requests, ours or Mooncake's.
    trace_run = serve + "--trace {file} --requests 10"
    good = '{"timestamp": 0, "input_length": 600, "output_length": 50}\n'
    for name, raw, needles in [
        ("trace-unsorted.jsonl", good + '{"timestamp": 5000, "input_length": 10, "output_length": 5}\n'
                                   '{"timestamp": 10, "input_length": 10, "output_length": 5}\n', [".jsonl:3:", "timestamp"]),
        ("trace-negative-time.jsonl", '{"timestamp": -5, "input_length": 10, "output_length": 5}\n', [".jsonl:1:", "timestamp"]),
        ("trace-zero-input.jsonl", good + '{"timestamp": 1, "input_length": 0, "output_length": 5}\n', [".jsonl:2:", "input_length"]),
        ("trace-fractional-output.jsonl", '{"timestamp": 1, "input_length": 10, "output_length": 5.5}\n', [".jsonl:1:", "output_length"]),
        ("trace-missing-output.jsonl", '{"timestamp": 1, "input_length": 10}\n', [".jsonl:1:", "output_length"]),
        ("trace-not-json.jsonl", good + "timestamp=1 input=10 output=5\n", [".jsonl:2:"]),
        ("trace-truncated.jsonl", good + '{"timestamp": 1, "input_len', [".jsonl:2:"]),
        ("trace-longer-than-context.jsonl", '{"timestamp": 0, "input_length": 100000000, "output_length": 5}\n', [".jsonl:1:", "KV cache"]),
        ("trace-time-huge.jsonl", '{"timestamp": 1e300, "input_length": 10, "output_length": 5}\n', [".jsonl:1:", "timestamp"]),
        ("trace-length-text.jsonl", '{"timestamp": 0, "input_length": "ten", "output_length": 5}\n', [".jsonl:1:", "input_length"]),
        ("trace-array-line.jsonl", "[0, 10, 5]\n", [".jsonl:1:"]),
        ("trace-binary.jsonl", "\x00\x01\x02\xff\xfe\n", [".jsonl:1:"]),
    ]:
        case(name, None, [], trace_run, [name] + needles, raw=raw)

    # Hugging Face configs: what `model` reads from a model's config.json.
    llama = load("tests", "data", "hf", "llama-config.json")
    mixtral = load("tests", "data", "hf", "mixtral-config.json")
    dsv3 = load("tests", "data", "hf", "deepseek_v3-config.json")
    oss = load("tests", "data", "hf", "gpt_oss-config.json")
    for name, base, edits, field in [
        ("hf-layers-zero.json", llama, [("num_hidden_layers", 0)], "num_hidden_layers"),
        ("hf-layers-huge.json", llama, [("num_hidden_layers", 1e9)], "num_hidden_layers"),
        ("hf-layers-fraction.json", llama, [("num_hidden_layers", 31.5)], "num_hidden_layers"),
        ("hf-heads-do-not-divide.json", llama, [("num_attention_heads", 30)], "num_attention_heads"),
        ("hf-kv-heads-above-heads.json", llama, [("num_key_value_heads", 64)], "num_key_value_heads"),
        ("hf-kv-heads-do-not-divide.json", llama, [("num_key_value_heads", 5)], "num_key_value_heads"),
        ("hf-vocab-zero.json", llama, [("vocab_size", 0)], "vocab_size"),
        ("hf-vocab-huge.json", llama, [("vocab_size", 1e12)], "vocab_size"),
        ("hf-ffn-negative.json", llama, [("intermediate_size", -14336)], "intermediate_size"),
        ("hf-hidden-text.json", llama, [("hidden_size", "4096")], "hidden_size"),
        ("hf-no-model-type.json", llama, [("model_type", DELETE)], "model_type"),
        ("hf-context-zero.json", llama, [("max_position_embeddings", 0)], "max_position_embeddings"),
        ("hf-experts-zero.json", mixtral, [("num_local_experts", 0)], "num_local_experts"),
        ("hf-top-k-above-experts.json", mixtral, [("num_experts_per_tok", 16)], "num_experts_per_tok"),
        ("hf-mla-rank-zero.json", dsv3, [("kv_lora_rank", 0)], "kv_lora_rank"),
        ("hf-routed-experts-negative.json", dsv3, [("n_routed_experts", -256)], "n_routed_experts"),
        ("hf-dense-layers-above-layers.json", dsv3, [("first_k_dense_replace", 100)], "first_k_dense_replace"),
        ("hf-expert-ffn-zero.json", dsv3, [("moe_intermediate_size", 0)], "moe_intermediate_size"),
        ("hf-window-negative.json", oss, [("sliding_window", -128)], "sliding_window"),
        ("hf-head-dim-zero.json", oss, [("head_dim", 0)], "head_dim"),
    ]:
        case(name, base, edits, "model {file}", [name, field])

    # Model files: ridgeline.model-spec/1.
    model = load("models", "llama3-8b.json")
    moe = load("models", "mixtral-8x7b.json")
    deepseek = load("models", "deepseek-v3.json")
    for name, base, edits, field in [
        ("model-heads-zero.json", model, [("n_heads", 0)], "n_heads"),
        ("model-head-dim-zero.json", model, [("head_dim", 0)], "head_dim"),
        ("model-head-dim-huge.json", model, [("head_dim", 1000000)], "head_dim"),
        ("model-ffn-zero.json", model, [("d_ff", 0)], "d_ff"),
        ("model-ffn-huge.json", model, [("d_ff", 1e12)], "d_ff"),
        ("model-vocab-huge.json", model, [("vocab_size", 1e12)], "vocab_size"),
        ("model-mlp-triple.json", model, [("mlp", "triple")], "mlp"),
        ("model-tied-maybe.json", model, [("tied_embeddings", "maybe")], "tied_embeddings"),
        ("model-layers-fraction.json", model, [("n_layers", 32.5)], "n_layers"),
        ("model-name-missing.json", model, [("name", DELETE)], "name"),
        ("model-schema-wrong.json", model, [("schema", "ridgeline.model-spec/7")], "schema"),
        ("model-experts-zero.json", moe, [("moe.n_experts", 0)], "moe.n_experts"),
        ("model-top-k-zero.json", moe, [("moe.top_k", 0)], "moe.top_k"),
        ("model-expert-ffn-negative.json", moe, [("moe.d_ff_expert", -14336)], "moe.d_ff_expert"),
        ("model-shared-experts-negative.json", deepseek, [("moe.n_shared_experts", -1)], "moe.n_shared_experts"),
        ("model-dense-layers-above-layers.json", deepseek, [("moe.first_dense_layers", 70)], "moe.first_dense_layers"),
        ("model-mla-rank-zero.json", deepseek, [("mla.kv_lora_rank", 0)], "mla.kv_lora_rank"),
        ("model-mtp-huge.json", deepseek, [("mtp_depth", 1000000)], "mtp_depth"),
        ("model-groups-zero.json", deepseek, [("moe.routing_groups", 0)], "moe.routing_groups"),
    ]:
        case(name, base, edits, "model {file}", [name, field])
    # A newline in a name would forge a line in every report and emitted launch file.
    case("model-name-newline.json", model, [("name", "llama3-8b\n--tensor-model-parallel-size 1")],
         "train --model {file} --hardware dgx-h100 --chips 8 --emit megatron", ["model-name-newline.json", "name", "control character"])

    # Run records: every field a measurement is read from.
    runs = load("tests", "data", "runs", "published-runs-dev.json")
    record = next(r for r in runs["records"] if r["hardware"]["accelerator"] == "h100-sxm" and r["model"]["moe"] is None)
    moe_record = next(r for r in runs["records"] if r["model"]["moe"] is not None)
    serve_record = load("tests", "data", "runs", "published-serve-records.json")["records"][1]
    one = lambda r: {"schema": runs["schema"], "records": [r]}
    for name, base, edits, field in [
        ("run-global-batch-zero.json", record, [("workload.global_batch_seqs", 0)], "global_batch_seqs"),
        ("run-global-batch-huge.json", record, [("workload.global_batch_seqs", 1e15)], "global_batch_seqs"),
        ("run-micro-batch-zero.json", record, [("workload.micro_batch_seqs", 0)], "micro_batch_seqs"),
        ("run-count-zero.json", record, [("hardware.count", 0)], "hardware.count"),
        ("run-count-huge.json", record, [("hardware.count", 1e9)], "hardware.count"),
        ("run-accelerator-path.json", record, [("hardware.accelerator", "../../etc/passwd")], "accelerator"),
        ("run-precision-fp7.json", record, [("precision", "fp7")], "precision"),
        ("run-zero-stage-5.json", record, [("plan.zero", 5)], "zero"),
        ("run-recompute-unknown.json", record, [("plan.recompute", "sometimes")], "recompute"),
        ("run-tokens-negative.json", record, [("measured.tokens_per_s", {"value": -1000, "status": "stated"})], "tokens_per_s"),
        ("run-tokens-zero.json", record, [("measured.tokens_per_s", {"value": 0, "status": "stated"})], "tokens_per_s"),
        ("run-tokens-status-unknown.json", record, [("measured.tokens_per_s", {"value": 1000, "status": "guessed"})], "tokens_per_s"),
        ("run-vpp-zero.json", record, [("plan.vpp", 0)], "vpp"),
        ("run-ep-does-not-divide.json", moe_record, [("plan.ep", 3)], "ep"),
        ("run-top-k-above-experts.json", moe_record, [("model.moe.top_k", 1000)], "top_k"),
        ("run-kind-unknown.json", record, [("kind", "fly")], "kind"),
        ("run-seq-huge.json", record, [("workload.seq_len", 1e12)], "seq_len"),
        ("run-devices-per-node-zero.json", record, [("hardware.devices_per_node", 0)], "devices_per_node"),
        ("run-scale-out-negative.json", record, [("hardware.scale_out_Bps_per_device", -1e9)], "scale_out_Bps_per_device"),
        ("run-heads-zero.json", record, [("model.heads", 0)], "heads"),
        ("run-vocab-zero.json", record, [("model.vocab", 0)], "vocab"),
        ("run-ffn-negative.json", record, [("model.d_ff", -1)], "d_ff"),
        ("run-source-missing.json", record, [("source", DELETE)], "source"),
        ("run-id-missing.json", record, [("id", DELETE)], "id"),
        ("run-serve-output-zero.json", serve_record, [("workload.output_len", 0)], "output_len"),
        ("run-kv-dtype-on-training.json", record, [("plan.kv_cache_dtype", "fp8")], "kv_cache_dtype"),
        ("run-serve-kv-dtype-fp4.json", serve_record, [("plan.kv_cache_dtype", "fp4")], "kv_cache_dtype"),
        ("run-serve-attention-dtype-int3.json", serve_record, [("plan.attention_weights_dtype", "int3")], "attention_weights_dtype"),
    ]:
        case(name, one(base), [("records.0." + k, v) for k, v in edits], "validate {file}", [name, field])
    case("run-records-not-list.json", None, [], "validate {file}", ["run-records-not-list.json", "records"],
         raw=json.dumps({"schema": runs["schema"], "records": {"a": 1}}))
    case("run-duplicate-id.json", None, [], "validate {file}", ["run-duplicate-id.json", record["id"]],
         raw=json.dumps({"schema": runs["schema"], "records": [record, record]}))

    # Scenario files: a job in one file.
    scenario = load("scenarios", "llama3-70b-tpu-v5p-512.json")
    for name, edits, field in [
        ("scenario-train-tokens-1e300.json", [("train_tokens.value", 1e300)], "train_tokens"),
        ("scenario-mtp-huge.json", [("plan.mtp_depth", 1000000)], "plan.mtp_depth"),
        ("scenario-chips-huge.json", [("chips", 1e12)], "chips"),
        ("scenario-batch-negative.json", [("global_batch_tokens", -4194304)], "global_batch_tokens"),
        ("scenario-seq-huge.json", [("seq_len", 1e12)], "seq_len"),
        ("scenario-vpp-zero.json", [("plan.vpp", 0)], "vpp"),
        ("scenario-micro-batch-zero.json", [("plan.micro_batch", 0)], "micro_batch"),
        ("scenario-zero-stage-7.json", [("plan.zero", 7)], "zero"),
        ("scenario-hardware-unknown.json", [("hardware", "tpu-v99")], "hardware"),
        ("scenario-model-missing.json", [("model", DELETE)], "model"),
        ("scenario-precision-fp7.json", [("plan.precision", "fp7")], "precision"),
        ("scenario-unknown-key.json", [("plan.tensor_parallel", 8)], "plan.tensor_parallel"),
        ("scenario-chips-text.json", [("chips", "512")], "chips"),
        ("scenario-placement-empty.json", [("plan.placement", [])], "plan.placement"),
        ("scenario-placement-twice.json", [("plan.placement", ["tensor", "tensor"])], "plan.placement"),
        ("scenario-placement-galaxy.json", [("plan.placement", ["tensor", "galaxy"])], "plan.placement"),
        ("scenario-micro-batch-fraction.json", [("plan.micro_batch_seqs", 1.5)], "plan.micro_batch_seqs"),
        ("scenario-dispatcher-nccl.json", [("plan.moe_dispatcher", "nccl")], "plan.moe_dispatcher"),
    ]:
        case(name, scenario, edits, "train --scenario {file}", [name, field])

    # Launch files people keep: Megatron arguments, MaxText YAML overrides, torchtitan TOML.
    train_from = "train --model llama3-8b --hardware dgx-h100 --chips 64 --from "
    megatron = "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 {arg}\n"
    for name, arg, needles in [
        ("launch-megatron-tp-fraction.sh", "--pipeline-model-parallel-size 4.5", ["--pipeline-model-parallel-size", "4.5"]),
        ("launch-megatron-seq-huge.sh", "--seq-length 1000000000000", ["--seq-length"]),
        ("launch-megatron-micro-batch-zero.sh", "--micro-batch-size 0", ["--micro-batch-size"]),
        ("launch-megatron-layers-negative.sh", "--num-layers -1", ["--num-layers"]),
        ("launch-megatron-tp-text.sh", "--context-parallel-size two", ["--context-parallel-size", "two"]),
        ("launch-megatron-global-batch-huge.sh", "--global-batch-size 1e15", ["--global-batch-size"]),
        ("launch-megatron-value-missing.sh", "--pipeline-model-parallel-size", ["--pipeline-model-parallel-size"]),
    ]:
        case(name, None, [], train_from + "megatron {file}", [name] + needles, raw=megatron.replace("{arg}", arg))
    maxtext_from = "train --model llama3-8b --hardware tpu-v5p --chips 64 --from maxtext "
    for name, raw, needles in [
        ("launch-maxtext-batch-huge.yml", "per_device_batch_size: 1e12\n", ["per_device_batch_size"]),
        ("launch-maxtext-tp-fraction.yml", "ici_tensor_parallelism: 4.5\n", ["ici_tensor_parallelism"]),
        ("launch-maxtext-remat-unknown.yml", "remat_policy: everything_twice\n", ["remat_policy", "everything_twice"]),
        ("launch-maxtext-length-negative.yml", "max_target_length: -1\n", ["max_target_length"]),
        ("launch-maxtext-bad-yaml.yml", "ici_fsdp_parallelism: [64\n", ["launch-maxtext-bad-yaml.yml"]),
        ("launch-maxtext-tp-text.yml", "ici_tensor_parallelism: eight\n", ["ici_tensor_parallelism", "eight"]),
        ("launch-maxtext-list-value.yml", "per_device_batch_size:\n  - 1\n  - 2\n", ["per_device_batch_size"]),
    ]:
        case(name, None, [], maxtext_from + "{file}", [name] + needles, raw=raw)
    # MaxText recipe scripts (a .sh file's python3 MaxText/train.py base.yml key=value line).
    recipe = "#!/bin/bash\npython3 MaxText/train.py MaxText/configs/base.yml {args}\n"
    for name, raw, needles in [
        ("launch-maxtext-script-other-config.sh", "#!/bin/bash\npython3 MaxText/train.py configs/mine.yml steps=3\n", ["mine.yml", "base.yml"]),
        ("launch-maxtext-script-no-config.sh", "#!/bin/bash\npython3 MaxText/train.py per_device_batch_size=2\n", ["line 2", "CONFIG.yml"]),
        ("launch-maxtext-script-flag.sh", recipe.replace("{args}", "--steps 30"), ["--steps", "key=value"]),
        ("launch-maxtext-script-int8.sh", recipe.replace("{args}", "int8_training=true"), ["int8_training", "true"]),
        ("launch-maxtext-script-tp-environment.sh", recipe.replace("{args}", "ici_tensor_parallelism=$TP"),
         ["ici_tensor_parallelism", "$TP", "environment"]),
        ("launch-maxtext-script-batch-huge.sh", recipe.replace("{args}", "per_device_batch_size=1e12"), ["per_device_batch_size"]),
        ("launch-maxtext-script-two-launches.sh", recipe.replace("{args}", "steps=1") + "python3 MaxText/train.py MaxText/configs/base.yml steps=2\n",
         ["more than one launch command"]),
        ("launch-maxtext-script-unknown-key.sh", recipe.replace("{args}", "use_magic=true steps=3 also_magic=1"), ["use_magic", "also_magic"]),
    ]:
        case(name, None, [], maxtext_from + "{file}", [name] + needles, raw=raw)
    for name, raw, needles in [
        ("launch-torchtitan-mixed-versions.toml", "[training]\ncompile = false\n[compile]\nenable = true\n",
         ["training.compile", "compile.enable", "v0.1.0"]),
        ("launch-torchtitan-v01-compile-text.toml", "[training]\ncompile = \"yes\"\n", ["compile.enable", "yes"]),
        ("launch-torchtitan-tp-zero.toml", "[parallelism]\ntensor_parallel_degree = 0\n", ["tensor_parallel_degree"]),
        ("launch-torchtitan-seq-huge.toml", "[training]\nseq_len = 1000000000000\n", ["seq_len"]),
        ("launch-torchtitan-batch-negative.toml", "[training]\nlocal_batch_size = -1\n", ["local_batch_size"]),
        ("launch-torchtitan-bad-syntax.toml", "[parallelism\ntensor_parallel_degree = 8\n", ["launch-torchtitan-bad-syntax.toml", "line 1"]),
        ("launch-torchtitan-tp-text.toml", "[parallelism]\ntensor_parallel_degree = \"eight\"\n", ["tensor_parallel_degree"]),
        ("launch-torchtitan-tp-fraction.toml", "[parallelism]\ntensor_parallel_degree = 2.5\n", ["tensor_parallel_degree"]),
        ("launch-torchtitan-duplicate-key.toml", "[parallelism]\ntensor_parallel_degree = 8\ntensor_parallel_degree = 4\n",
         ["tensor_parallel_degree"]),
    ]:
        case(name, None, [], train_from + "torchtitan {file}", [name] + needles, raw=raw)

    # Stack files: how a software stack runs.
    stack = load("stacks", "pytorch-eager.json")
    train_with = "train --model llama3-8b --hardware dgx-h100 --chips 8 --stack {file}"
    for name, edits, field in [
                ("stack-step-overhead-negative.json", [("fitted.per_step_overhead_s", -0.1)], "fitted.per_step_overhead_s"),
        ("stack-step-overhead-hour.json", [("fitted.per_step_overhead_s", 3600)], "fitted.per_step_overhead_s"),
        ("stack-rank-cv-5.json", [("fitted.rank_time_cv", 5)], "fitted.rank_time_cv"),
        ("stack-name-missing.json", [("name", DELETE)], "name"),
        ("stack-cross-entropy-text.json", [("fp32_cross_entropy", "sometimes")], "fp32_cross_entropy"),
        ("stack-sharded-blocks-text.json", [("sharded_comm_blocks", "yes")], "sharded_comm_blocks"),
        ("stack-sharded-copies-unsourced.json", [("sharded_copies_per_rank", True)], "sharded_collectives_source"),
    ]:
        case(name, stack, edits, train_with, [name, field])
    # A kernel no chip has measured: the chip's kernel table is what lacks it, so that file is named.
    case("stack-attention-unknown.json", stack, [("attention", "psychic-attention")], train_with,
         ["kernels.attention.psychic-attention", "no measurements"])

    # Topologies and systems.
    topo = load("hardware", "topologies", "hypercube-16.json")
    topo_run = "train --model llama3-8b --topology {file}"
    for name, edits, field in [
        ("topology-no-levels.json", [("levels", [])], "levels"),
        ("topology-chips-zero.json", [("levels.0.chips", 0)], "chips"),
        ("topology-latency-negative.json", [("levels.0.hop_latency_s.value", -1e-6)], "hop_latency_s"),
        ("topology-self-link.json", [("levels.0.links.0", [3, 3])], "links[0]"),
    ]:
        case(name, topo, edits, topo_run, [name, field])
    system = load("hardware", "systems", "dgx-h100.json")
    for name, edits, field in [
        ("system-chip-unknown.json", [("chip", "h999")], "chip"),
        ("system-domain-zero.json", [("scale_up.domain_size", 0)], "domain_size"),
    ]:
        case(name, system, edits, "train --model llama3-8b --hardware {file} --chips 8", [name, field])
    # More of the files people hand-edit: chips, systems, policies, strategies, serving records, measurements.
    chip = load("hardware", "chips", "h100-sxm.json")
    roof = "roofline --hardware {file} --matmul 64,4096,4096"
    for name, edits, field in [
        ("chip-name-missing.json", [("name", DELETE)], "name"),
        ("chip-kind-fpga.json", [("kind", "fpga")], "kind"),
        ("chip-nvlink-links-zero.json", [("interconnect.nvlink.links_per_chip.value", 0)], "links_per_chip"),
        ("chip-collective-fraction-2.json", [("interconnect.nvlink.collective_fraction.value", 2)], "collective_fraction"),
        ("chip-hbm-bw-text.json", [("hbm_bw_Bps.value", "3.35 TB/s")], "hbm_bw_Bps"),
        ("chip-value-without-source.json", [("hbm_bytes.source", DELETE)], "hbm_bytes"),
    ]:
        case(name, chip, edits, roof, [name, field])
    tpu = load("hardware", "chips", "tpu-v5e.json")
    for name, edits, field in [
        ("chip-rank-variation-unsourced.json", [("rank_variation.source", DELETE)], "rank_variation.source"),
        ("chip-rank-variation-text.json", [("rank_variation.deterministic", "yes")], "rank_variation.deterministic"),
        ("chip-rank-variation-unstated.json", [("rank_variation.deterministic", DELETE)], "rank_variation.deterministic"),
    ]:
        case(name, tpu, edits, roof, [name, field])
    system = load("hardware", "systems", "dgx-h100.json")
    for name, edits, field in [
        ("system-chips-per-host-zero.json", [("chips_per_host.value", 0)], "chips_per_host"),
        ("system-oversubscription-negative.json", [("scale_out.oversubscription", -2)], "oversubscription"),
        ("system-scale-up-kind-unknown.json", [("scale_up.kind", "carrier-pigeon")], "scale_up.kind"),
    ]:
        case(name, system, edits, "train --model llama3-8b --hardware {file} --chips 8", [name, field])
    policy = load("recompute", "megatron-lean.json")
    policy_run = "train --model llama3-8b --hardware dgx-h100 --chips 8 --recompute {file}"
    case("recompute-search-text.json", policy, [("search", "yes")], policy_run, ["recompute-search-text.json", "search"])
    case("recompute-schema-wrong.json", policy, [("schema", "ridgeline.recompute-policy/9")], policy_run, ["recompute-schema-wrong.json", "schema"])
    strategy = load("strategies", "megatron-3d.json")
    strategy_run = "train --model llama3-8b --hardware dgx-h100 --chips 8 --strategy {file}"
    case("strategy-unknown-axis.json", strategy, [("weights.qkv.heads", ["galaxy"])], strategy_run, ["strategy-unknown-axis.json", "weights.qkv.heads"])
    case("strategy-weights-list.json", strategy, [("weights", [1, 2])], strategy_run, ["strategy-weights-list.json", "weights"])
    runs = load("tests", "data", "runs", "published-serve-records.json")
    serve_record = runs["records"][1]
    for name, edits, field in [
        ("run-serve-input-zero.json", [("workload.input_len", 0)], "input_len"),
        ("run-serve-concurrency-zero.json", [("workload.concurrency", 0)], "concurrency"),
        ("run-serve-throughput-negative.json", [("measured.output_tokens_per_s.value", -623.4)], "output_tokens_per_s"),
    ]:
        case(name, {"schema": runs["schema"], "records": [serve_record]}, [("records.0." + k, v) for k, v in edits], "validate {file}", [name, field])
    measured = load("tests", "data", "calibration", "small-measurements.json")
    fit_chip = "fit {file} -o hostile-fit-never-written.json"
    case("calibration-gemm-negative-time.json", measured, [("gemms.0.time_s", -1e-5)], fit_chip, ["calibration-gemm-negative-time.json", "gemms[0].time_s"])
    case("calibration-collective-kind-unknown.json", measured, [("collectives.0.kind", "telepathy")], fit_chip,
         ["calibration-collective-kind-unknown.json", "collectives[0].kind"])
    kernels = load("tests", "data", "reference", "gpu-kernels-h100.json")
    case("kernels-attention-seq-zero.json", kernels, [("attention.0.seq", 0)], "fit {file} --like h100-sxm -o hostile-fit-never-written.json",
         ["kernels-attention-seq-zero.json", "attention[0].seq"])
    # One shape cannot separate two fitted terms: refused on the measurements, before any fit.
    one_rows = copy.deepcopy(kernels)
    one_rows["gemm"] = [g for g in kernels["gemm"] if g["dtype"] != "bf16"] + [g for g in kernels["gemm"] if g["dtype"] == "bf16"][:1]
    case("kernels-gemm-one-row-count.json", one_rows, [], "fit {file} --like h100-sxm -o hostile-fit-never-written.json",
         ["kernels-gemm-one-row-count.json", "gemm", "one row count"])
    case("calibration-copies-one-size.json", measured, [("copies", [measured["copies"][0]] * 3)], fit_chip,
         ["calibration-copies-one-size.json", "copies", "two sizes"])


if __name__ == "__main__":
    main()
