"""Measures, on a lent GPU, the kernels the cost model prices for fine-grained MoE, fp8 recipes and
small-batch decode, each beside its own baseline in the same run:

1. Grouped expert GEMMs (forward) of Qwen3-30B-A3B (d 2048, d_ff_expert 768, 128 experts, top-8,
   gate+up fused 2048->1536, down 768->2048) and a GPT-OSS-120B-like MoE (d 2880, d_ff_expert 2880,
   128 experts, top-4), expert parallelism 8 (16 local experts). "tokens" = tokens routed by the EP
   group; one GPU's expert GEMMs get tokens*topk/ep rows split evenly over its 16 experts
   (tokens*topk/128 rows per expert: tens to hundreds). Timed as torch._grouped_mm (bf16), a loop of
   torch.mm per expert, torch.bmm of the equal groups, and ONE dense GEMM with the same rows, K, N
   (same FLOPs): grouped/dense is the ratio the cost model needs.
2. Router and token permutation on one GPU's tokens (4096, 16384): router logits GEMM, softmax+top-k
   (Qwen3: softmax, top-k, renormalise; GPT-OSS: top-k, softmax over the k), expert-count histogram,
   argsort of the expert ids, index_select gather into expert order, weighted index_add_ unpermute.
3. fp8 (e4m3fn) quantisation of a bf16 [8192x8192] and [16384x4096] tensor, eager PyTorch: tensorwise,
   rowwise, 1x128 and 128x128 blocks (amax pass + scaled cast pass), the transposed casts a backward
   pass needs; bytes moved by the kernels run and by an ideal fused kernel (read bf16 once, write fp8
   once). torch._scaled_mm fp8 8192^3 (tensorwise, rowwise) vs bf16 torch.mm 8192^3. At the end, if
   time allows, the same recipes through torch.compile (fused Triton kernels).
4. One LLaMA-3 8B decoder layer's decode step (RMSNorm, fused QKV, RoPE, KV-cache write, SDPA over a
   preallocated bf16 KV cache, output projection, gated SiLU MLP) at batch 1/8/32/64, KV length
   1024/4096: CUDA-graph replay vs eager, per layer (1 layer, and 4 chained layers / 4), the bytes of
   weights + KV read and the implied GB/s as a share of a 1 GiB device-to-device copy's GB/s measured
   in the same run (copy GB/s counts read + write bytes).

Method: CUDA events; each sample times `calls_per_sample` back-to-back calls (enough for >= 0.5 ms) and
divides; median of 30 samples after warm-up. No L2 flush (back to back, as in a step). Each case is
wrapped in try/except; failures are recorded under "errors". Prints ONE JSON document on stdout
(schema ridgeline.gpu-measurements-moe-fp8-decode/1), progress on stderr. About 1-2 minutes on an H100.
Run: python3 scripts/gpu/moe_fp8_decode.py > $OUT/moe_fp8_decode.json 2> $OUT/moe_fp8_decode.log
"""
import datetime
import json
import math
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

from held_busy import clocks, event_s

T0 = time.time()
dev = torch.device("cuda")
BF16 = torch.bfloat16
FP8 = getattr(torch, "float8_e4m3fn", None)
FP8_MAX = 448.0
SAMPLES = 30
ERRORS = []


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


def bench(fn, samples=SAMPLES, warmups=3, min_sample_s=5e-4):
    """Median seconds per call of fn: each sample = CUDA-event time of `inner` back-to-back calls / inner."""
    for _ in range(warmups):
        fn()
    torch.cuda.synchronize()
    est = event_s(fn)
    inner = max(1, min(500, int(math.ceil(min_sample_s / max(est, 1e-7)))))
    out = []
    for _ in range(samples):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e-3 / inner)
    return {"median_s": statistics.median(out), "min_s": min(out), "max_s": max(out), "samples": samples,
            "calls_per_sample": inner}


def fail(where, e):
    ERRORS.append({"case": where, "error": f"{type(e).__name__}: {e}"})
    log(f"FAILED {where}: {type(e).__name__}: {e}")
    traceback.print_exc(file=sys.stderr)


def free():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def smi():
    fields = ["name", "driver_version", "memory.total", "clocks.sm", "clocks.max.sm", "clocks.mem", "clocks.max.mem",
              "power.draw", "power.limit", "temperature.gpu", "compute_cap"]
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        if r.returncode != 0:  # an older nvidia-smi without compute_cap
            fields = fields[:-1]
            r = subprocess.run(["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=20)
        vals = [v.strip() for v in r.stdout.strip().splitlines()[0].split(",")]
        return dict(zip(fields, vals))
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


def device_facts():
    p = torch.cuda.get_device_properties(0)
    sm_mhz, watts = clocks()
    return {"name": torch.cuda.get_device_name(0), "sm_count": p.multi_processor_count,
            "compute_capability": f"{p.major}.{p.minor}", "total_memory_bytes": p.total_memory,
            "l2_cache_bytes": getattr(p, "L2_cache_size", None), "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "nvml_idle": {"sm_mhz": sm_mhz, "watts": watts}, "nvidia_smi": smi()}


# ---------------------------------------------------------------- 1. grouped expert GEMMs

MOE = [  # name, d_model, d_ff_expert, experts, top_k
    ("qwen3-30b-a3b", 2048, 768, 128, 8),
    ("gpt-oss-120b-like", 2880, 2880, 128, 4),
]
EP = 8


def grouped_gemm_case(model, tokens, gemm, rows, groups, k, n):
    m = rows // groups
    x = torch.randn(rows, k, device=dev, dtype=BF16)
    w = torch.randn(groups, n, k, device=dev, dtype=BF16) * 0.02  # nn.Linear layout [out, in] per expert
    wt = w.transpose(-2, -1)  # [G, K, N], column-major per expert
    wd = torch.randn(n, k, device=dev, dtype=BF16) * 0.02
    flops = 2.0 * rows * k * n
    r = {"model": model, "tokens": tokens, "gemm": gemm, "experts_local": groups, "rows_total": rows,
         "rows_per_expert": m, "K": k, "N": n, "dtype": "bf16", "flops": flops}

    def tf(t):
        return flops / t["median_s"] / 1e12

    dense = bench(lambda: torch.mm(x, wd.t()))
    r["dense"] = dict(dense, tflops=tf(dense), shape=[rows, k, n])
    outs = torch.empty(rows, n, device=dev, dtype=BF16)
    xs, os_ = x.split(m), outs.split(m)

    def loop():
        for i in range(groups):
            torch.mm(xs[i], wt[i], out=os_[i])
    t = bench(loop)
    r["loop_mm"] = dict(t, tflops=tf(t), ratio_to_dense=t["median_s"] / dense["median_s"])
    xb = x.view(groups, m, k)
    t = bench(lambda: torch.bmm(xb, wt))
    r["bmm_equal_groups"] = dict(t, tflops=tf(t), ratio_to_dense=t["median_s"] / dense["median_s"])
    if hasattr(torch, "_grouped_mm"):
        offs = (torch.arange(1, groups + 1, device=dev, dtype=torch.int32) * m)
        layouts = [("b column-major [G,K,N] view of [G,N,K]", wt), ("b row-major [G,K,N]", wt.contiguous())]
        for layout, b in layouts:
            try:
                y = torch._grouped_mm(x, b, offs=offs)
                ref = torch.mm(x[:m], b[0])
                err = ((y[:m].float() - ref.float()).abs().max() / ref.float().abs().max()).item()
                t = bench(lambda: torch._grouped_mm(x, b, offs=offs))
                r["grouped_mm"] = dict(t, tflops=tf(t), ratio_to_dense=t["median_s"] / dense["median_s"], b_layout=layout,
                                       max_rel_err_expert0=err)
                break
            except Exception as e:
                r.setdefault("grouped_mm_errors", []).append(f"{layout}: {type(e).__name__}: {e}")
    else:
        r["grouped_mm_errors"] = ["torch._grouped_mm not in this torch"]
    best = r.get("grouped_mm", r["loop_mm"])
    r["grouped_over_dense"] = best["median_s"] / dense["median_s"]
    r["grouped_kind"] = "grouped_mm" if "grouped_mm" in r else "loop_mm"
    log(f"moe {model} tokens {tokens} {gemm} rows/expert {m}: dense {r['dense']['tflops']:.0f} TFLOP/s, "
        f"{r['grouped_kind']} {best['tflops']:.0f}, loop {r['loop_mm']['tflops']:.0f}, bmm {r['bmm_equal_groups']['tflops']:.0f}, "
        f"grouped/dense {r['grouped_over_dense']:.2f}")
    return r


def moe_gemms():
    out = []
    for model, d, ff, e, topk in MOE:
        groups = e // EP
        for tokens in (1024, 4096, 16384):
            rows = tokens * topk // EP
            pair = []
            for gemm, k, n in (("gate_up", d, 2 * ff), ("down", ff, d)):
                try:
                    pair.append(grouped_gemm_case(model, tokens, gemm, rows, groups, k, n))
                except Exception as ex:
                    fail(f"moe_grouped_gemm {model} {tokens} {gemm}", ex)
                free()
            out += pair
            if len(pair) == 2 and all("dense" in p for p in pair):
                g = sum(p.get("grouped_mm", p["loop_mm"])["median_s"] for p in pair)
                dn = sum(p["dense"]["median_s"] for p in pair)
                out.append({"model": model, "tokens": tokens, "gemm": "expert_mlp_total (gate_up + down)",
                            "rows_per_expert": pair[0]["rows_per_expert"], "grouped_s": g, "dense_s": dn,
                            "grouped_over_dense": g / dn, "flops": pair[0]["flops"] + pair[1]["flops"],
                            "grouped_tflops": (pair[0]["flops"] + pair[1]["flops"]) / g / 1e12})
    return out


# ---------------------------------------------------------------- 2. router and permutation

def router_case(model, d, e, topk, tokens):
    x = torch.randn(tokens, d, device=dev, dtype=BF16)
    wr = torch.randn(e, d, device=dev, dtype=BF16) * 0.02
    logits = x @ wr.t()
    st = {}

    def router_gemm():
        st["logits"] = x @ wr.t()

    def softmax_topk():
        if model.startswith("qwen"):
            p = torch.softmax(logits.float(), dim=-1)
            w, ids = torch.topk(p, topk, dim=-1)
            w = w / w.sum(dim=-1, keepdim=True)
        else:
            v, ids = torch.topk(logits, topk, dim=-1)
            w = torch.softmax(v.float(), dim=-1)
        st["w"], st["ids"] = w, ids

    softmax_topk()
    ids, w = st["ids"], st["w"]
    flat = ids.reshape(-1)

    def histogram():
        st["counts"] = torch.bincount(flat, minlength=e)

    def argsort():
        order = torch.argsort(flat, stable=True)
        st["order"], st["src"] = order, torch.div(order, topk, rounding_mode="floor")

    argsort()
    order, src = st["order"], st["src"]
    w_sorted = w.reshape(-1)[order].to(BF16)

    def gather():
        st["xp"] = x.index_select(0, src)

    gather()
    y = st["xp"]  # stands for the expert outputs, already in expert order
    out = torch.empty(tokens, d, device=dev, dtype=BF16)

    def unpermute():
        out.zero_()
        out.index_add_(0, src, y * w_sorted.unsqueeze(1))

    kernels = [("router_gemm", router_gemm, 2 * tokens * d * 2 + e * d * 2 + tokens * e * 2, 2.0 * tokens * d * e),
               ("softmax_topk", softmax_topk, tokens * e * 2 + tokens * topk * 12, None),
               ("histogram_bincount", histogram, tokens * topk * 8 + e * 8, None),
               ("argsort_expert_ids", argsort, tokens * topk * 8 * 4, None),
               ("gather_index_select", gather, tokens * topk * d * 2 * 2 + tokens * topk * 8, None),
               ("unpermute_weighted_index_add", unpermute, tokens * topk * d * 2 * 3 + tokens * d * 2 * 3, None)]
    r = {"model": model, "tokens": tokens, "d_model": d, "experts": e, "top_k": topk, "kernels": []}
    total = 0.0
    for name, fn, nbytes, flops in kernels:
        t = bench(fn)
        k = dict(t, kernel=name, approx_bytes=nbytes, gbps=nbytes / t["median_s"] / 1e9)
        if flops:
            k["tflops"] = flops / t["median_s"] / 1e12
        r["kernels"].append(k)
        total += t["median_s"]
    r["sum_s"] = total
    r["router_s"] = sum(k["median_s"] for k in r["kernels"][:2])
    r["permute_unpermute_s"] = total - r["router_s"]
    log(f"router {model} tokens {tokens}: " + ", ".join(f"{k['kernel']} {k['median_s']*1e6:.1f}" for k in r["kernels"])
        + f" us; sum {total*1e6:.1f} us")
    return r


def router_permute():
    out = []
    for model, d, _, e, topk in MOE:
        for tokens in (4096, 16384):
            try:
                out.append(router_case(model, d, e, topk, tokens))
            except Exception as ex:
                fail(f"router_permute {model} {tokens}", ex)
            free()
    return out


# ---------------------------------------------------------------- 3. fp8 quantisation and GEMM

def amax_inf(x, dim=None, keepdim=False):
    """abs-max reduction in one kernel (no materialised abs)."""
    return torch.linalg.vector_norm(x, ord=float("inf"), dim=dim, keepdim=keepdim)


CAST_PATH = {"path": "mul_out_fp8"}


def scaled_cast(x, scale, out):
    """out (fp8) = x * scale, one kernel when mul can store fp8 directly, else mul then .to()."""
    if CAST_PATH.get("path", "mul_out_fp8") == "mul_out_fp8":
        try:
            return torch.mul(x, scale, out=out)
        except Exception as e:
            CAST_PATH["path"], CAST_PATH["why"] = "mul_then_copy", f"{type(e).__name__}: {e}"
    out.copy_(x * scale)
    return out


def fp8_quant_case(rows, cols):
    x = torch.randn(rows, cols, device=dev, dtype=BF16)
    n = rows * cols
    q = torch.empty(rows, cols, device=dev, dtype=FP8)
    qt = torch.empty(cols, rows, device=dev, dtype=FP8)
    res = []
    # check the one-kernel cast once against the plain two-step cast
    s0 = (FP8_MAX / amax_inf(x).float()).reshape(())
    scaled_cast(x, s0, q)
    ref = (x.float() * s0).to(FP8)
    CAST_PATH["max_abs_diff_vs_two_step"] = (q.float() - ref.float()).abs().max().item()

    def recipe(name, amax_fn, cast_fn, n_scales, transposed=False, extra=None):
        state = {}

        def do_amax():
            state["s"] = FP8_MAX / amax_fn().float().clamp(min=1e-12)

        do_amax()

        def do_cast():
            cast_fn(state["s"])

        def both():
            do_amax()
            do_cast()

        t_all, t_amax, t_cast = bench(both), bench(do_amax), bench(do_cast)
        scale_bytes = n_scales * 4
        moved = 2 * n + (2 * n + n) + 2 * scale_bytes  # amax pass reads bf16; cast pass reads bf16, writes fp8
        ideal = 2 * n + n + scale_bytes
        r = {"recipe": name, "shape": [rows, cols], "dtype_in": "bf16", "dtype_out": "float8_e4m3fn", "scales": n_scales,
             "output_transposed": transposed, "median_s": t_all["median_s"], "timing": t_all,
             "bytes_moved": moved, "gbps": moved / t_all["median_s"] / 1e9,
             "ideal_fused_bytes": ideal, "effective_gbps_vs_ideal": ideal / t_all["median_s"] / 1e9,
             "amax_pass": dict(t_amax, bytes=2 * n + scale_bytes, gbps=(2 * n + scale_bytes) / t_amax["median_s"] / 1e9),
             "cast_pass": dict(t_cast, bytes=3 * n + scale_bytes, gbps=(3 * n + scale_bytes) / t_cast["median_s"] / 1e9)}
        if extra:
            r.update(extra)
        res.append(r)
        log(f"fp8 {name} {rows}x{cols}: {t_all['median_s']*1e6:.0f} us, {r['gbps']:.0f} GB/s moved, "
            f"{r['effective_gbps_vs_ideal']:.0f} GB/s vs fused ideal (amax {r['amax_pass']['gbps']:.0f}, cast {r['cast_pass']['gbps']:.0f})")

    recipes = [
        ("tensorwise", lambda: amax_inf(x), lambda s: scaled_cast(x, s, q), 1, False),
        ("rowwise", lambda: amax_inf(x, dim=1, keepdim=True), lambda s: scaled_cast(x, s, q), rows, False),
        ("blockwise_1x128", lambda: amax_inf(x.view(rows, cols // 128, 128), dim=2, keepdim=True),
         lambda s: scaled_cast(x.view(rows, cols // 128, 128), s, q.view(rows, cols // 128, 128)), rows * cols // 128, False),
        ("blockwise_128x128", lambda: amax_inf(x.view(rows // 128, 128, cols // 128, 128), dim=(1, 3), keepdim=True),
         lambda s: scaled_cast(x.view(rows // 128, 128, cols // 128, 128), s, q.view(rows // 128, 128, cols // 128, 128)),
         (rows // 128) * (cols // 128), False),
        # backward operands: x^T in fp8, contiguous, straight from bf16
        ("tensorwise_transpose_cast", lambda: amax_inf(x), lambda s: scaled_cast(x.t(), s, qt), 1, True),
        ("columnwise_transpose_cast", lambda: amax_inf(x, dim=0, keepdim=True).t(),
         lambda s: scaled_cast(x.t(), s, qt), cols, True),
        ("blockwise_128x1_transpose_cast", lambda: amax_inf(x.t().view(cols, rows // 128, 128), dim=2, keepdim=True),
         lambda s: scaled_cast(x.t().view(cols, rows // 128, 128), s, qt.view(cols, rows // 128, 128)), rows * cols // 128, True),
    ]
    for name, a, c, ns, tr in recipes:
        try:
            recipe(name, a, c, ns, tr, {"cast_path": CAST_PATH.get("path", "mul_out_fp8")})
        except Exception as ex:
            fail(f"fp8_quantize {name} {rows}x{cols}", ex)
    # transpose of an already-cast fp8 tensor (the other way to get x^T: read fp8, write fp8)
    try:
        t = bench(lambda: qt.copy_(q.t()))
        res.append({"recipe": "fp8_transpose_copy", "shape": [rows, cols], "dtype_in": "float8_e4m3fn", "dtype_out": "float8_e4m3fn",
                    "output_transposed": True, "median_s": t["median_s"], "timing": t, "bytes_moved": 2 * n,
                    "gbps": 2 * n / t["median_s"] / 1e9, "ideal_fused_bytes": 2 * n, "effective_gbps_vs_ideal": 2 * n / t["median_s"] / 1e9})
        log(f"fp8 transpose copy {rows}x{cols}: {t['median_s']*1e6:.0f} us, {2*n/t['median_s']/1e9:.0f} GB/s")
    except Exception as ex:
        fail(f"fp8_transpose_copy {rows}x{cols}", ex)
    return res


def fp8_gemm():
    m = k = nn = 8192
    flops = 2.0 * m * k * nn
    a = torch.randn(m, k, device=dev, dtype=BF16)
    b = torch.randn(nn, k, device=dev, dtype=BF16)
    r = {"shape": [m, k, nn], "flops": flops}
    t = bench(lambda: torch.mm(a, b.t()))
    r["bf16_mm"] = dict(t, tflops=flops / t["median_s"] / 1e12)
    log(f"gemm bf16 8192^3: {r['bf16_mm']['tflops']:.0f} TFLOP/s")
    a8, b8 = a.to(FP8), b.to(FP8)
    one = torch.ones((), device=dev, dtype=torch.float32)
    sa, sb = torch.ones(m, 1, device=dev, dtype=torch.float32), torch.ones(1, nn, device=dev, dtype=torch.float32)
    variants = [("fp8_tensorwise_fast_accum", dict(scale_a=one, scale_b=one, use_fast_accum=True)),
                ("fp8_tensorwise", dict(scale_a=one, scale_b=one, use_fast_accum=False)),
                ("fp8_rowwise_fast_accum", dict(scale_a=sa, scale_b=sb, use_fast_accum=True))]
    for name, kw in variants:
        try:
            t = bench(lambda: torch._scaled_mm(a8, b8.t(), out_dtype=BF16, **kw))
            r[name] = dict(t, tflops=flops / t["median_s"] / 1e12, speedup_vs_bf16=r["bf16_mm"]["median_s"] / t["median_s"])
            log(f"gemm {name} 8192^3: {r[name]['tflops']:.0f} TFLOP/s ({r[name]['speedup_vs_bf16']:.2f}x bf16)")
        except Exception as ex:
            r[name] = {"error": f"{type(ex).__name__}: {ex}"}
            fail(f"fp8_gemm {name}", ex)
    return r


# ---------------------------------------------------------------- 4. LLaMA-3 8B decode layer

D, HQ, HK, HD, FF = 4096, 32, 8, 128, 14336
WEIGHT_BYTES = 2 * (4096 * (4096 + 2 * 1024) + 4096 * 4096 + 3 * 4096 * 14336)


def rms_norm(x, w):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), w, eps=1e-5)
    return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w


class Weights:
    def __init__(self):
        s = 0.02
        self.wqkv = torch.randn(HQ * HD + 2 * HK * HD, D, device=dev, dtype=BF16) * s
        self.wo = torch.randn(D, HQ * HD, device=dev, dtype=BF16) * s
        self.wgu = torch.randn(2 * FF, D, device=dev, dtype=BF16) * s
        self.wd = torch.randn(D, FF, device=dev, dtype=BF16) * s
        self.n1 = torch.ones(D, device=dev, dtype=BF16)
        self.n2 = torch.ones(D, device=dev, dtype=BF16)


def rope(t, cos, sin):
    t1, t2 = t[..., : HD // 2], t[..., HD // 2:]
    return torch.cat((t1 * cos - t2 * sin, t2 * cos + t1 * sin), dim=-1)


def make_step(w, batch, kv_len):
    kc = torch.randn(batch, HK, kv_len, HD, device=dev, dtype=BF16)
    vc = torch.randn(batch, HK, kv_len, HD, device=dev, dtype=BF16)
    pos = kv_len - 1  # the new token's slot: attention reads the whole cache
    ang = pos / (500000.0 ** (torch.arange(0, HD // 2, device=dev, dtype=torch.float32) * 2 / HD))
    cos, sin = ang.cos().to(BF16), ang.sin().to(BF16)

    def step(x):  # x [B, 1, D] -> [B, 1, D]
        b = x.shape[0]
        h = rms_norm(x, w.n1)
        q, k, v = F.linear(h, w.wqkv).split([HQ * HD, HK * HD, HK * HD], dim=-1)
        q = rope(q.view(b, HQ, HD), cos, sin)
        k = rope(k.view(b, HK, HD), cos, sin)
        kc[:, :, pos].copy_(k)
        vc[:, :, pos].copy_(v.view(b, HK, HD))
        # GQA decode: the 4 query heads sharing a KV head become 4 query rows of that head
        a = F.scaled_dot_product_attention(q.view(b, HK, HQ // HK, HD), kc, vc)
        x = x + F.linear(a.reshape(b, 1, HQ * HD), w.wo)
        g, u = F.linear(rms_norm(x, w.n2), w.wgu).chunk(2, dim=-1)
        return x + F.linear(F.silu(g) * u, w.wd)

    def attn_only(q):
        return F.scaled_dot_product_attention(q, kc, vc)

    return step, attn_only, (kc, vc)


def graph_of(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g


def copy_baseline():
    nbytes = 1 << 30
    src = torch.empty(nbytes, dtype=torch.uint8, device=dev).fill_(1)
    dst = torch.empty_like(src)
    t = bench(lambda: dst.copy_(src))
    r = dict(t, bytes=nbytes, read_plus_write_bytes=2 * nbytes, gbps_read_plus_write=2 * nbytes / t["median_s"] / 1e9,
             gbps_copied=nbytes / t["median_s"] / 1e9)
    del src, dst
    free()
    log(f"copy 1 GiB d2d: {r['median_s']*1e3:.3f} ms, {r['gbps_read_plus_write']:.0f} GB/s (read+write)")
    return r


def decode(copy_gbps):
    w = Weights()
    out = []
    for kv_len in (1024, 4096):
        for batch in (1, 8, 32, 64):
            try:
                step, attn_only, cache = make_step(w, batch, kv_len)
                x_in = torch.randn(batch, 1, D, device=dev, dtype=BF16)
                buf = {}

                def one():
                    buf["y"] = step(x_in)

                def four():
                    y = x_in
                    for _ in range(4):
                        y = step(y)
                    buf["y4"] = y

                g1, g4 = graph_of(one), graph_of(four)
                t_g1, t_g4 = bench(g1.replay), bench(g4.replay)
                t_e1, t_e4 = bench(one), bench(four)
                q = torch.randn(batch, HK, HQ // HK, HD, device=dev, dtype=BF16)
                t_at = bench(lambda: attn_only(q))
                kv_bytes = 2 * batch * kv_len * HK * HD * 2
                nbytes = WEIGHT_BYTES + kv_bytes
                per_layer_graph = t_g4["median_s"] / 4
                r = {"batch": batch, "kv_len": kv_len, "weight_bytes": WEIGHT_BYTES, "kv_bytes": kv_bytes, "bytes_per_step": nbytes,
                     "graph_1_layer": t_g1, "graph_4_layers": t_g4, "eager_1_layer": t_e1, "eager_4_layers": t_e4,
                     "attention_sdpa_only": dict(t_at, kv_gbps=kv_bytes / t_at["median_s"] / 1e9),
                     "graph_per_layer_s": per_layer_graph, "eager_per_layer_s": t_e4["median_s"] / 4,
                     "graph_1_layer_s": t_g1["median_s"], "eager_1_layer_s": t_e1["median_s"],
                     "eager_over_graph": t_e4["median_s"] / t_g4["median_s"],
                     "graph_gbps": nbytes / per_layer_graph / 1e9, "eager_gbps": nbytes / (t_e4["median_s"] / 4) / 1e9}
                if copy_gbps:
                    r["graph_share_of_copy_gbps"] = r["graph_gbps"] / copy_gbps
                    r["eager_share_of_copy_gbps"] = r["eager_gbps"] / copy_gbps
                out.append(r)
                log(f"decode b{batch} kv{kv_len}: graph {per_layer_graph*1e6:.1f} us/layer ({r['graph_gbps']:.0f} GB/s"
                    + (f", {r['graph_share_of_copy_gbps']:.2f} of copy" if copy_gbps else "")
                    + f"), graph 1-layer {t_g1['median_s']*1e6:.1f}, eager {r['eager_per_layer_s']*1e6:.1f} us/layer, "
                    f"sdpa {t_at['median_s']*1e6:.1f} us")
                del g1, g4, cache, step, attn_only, buf
            except Exception as ex:
                fail(f"decode b{batch} kv{kv_len}", ex)
            free()
    del w
    free()
    return out


# ---------------------------------------------------------------- 3b. fp8 recipes through torch.compile (if time allows)

def compiled_fp8(deadline_s):
    res = []

    def tensorwise(x):
        s = FP8_MAX / x.abs().amax().float().clamp(min=1e-12)
        return (x.float() * s).clamp(-FP8_MAX, FP8_MAX).to(FP8), s

    def rowwise(x):
        s = FP8_MAX / x.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12)
        return (x.float() * s).clamp(-FP8_MAX, FP8_MAX).to(FP8), s

    def block_1x128(x):
        r, c = x.shape
        xb = x.view(r, c // 128, 128).float()
        s = FP8_MAX / xb.abs().amax(dim=2, keepdim=True).clamp(min=1e-12)
        return (xb * s).clamp(-FP8_MAX, FP8_MAX).to(FP8).view(r, c), s

    def block_128x128(x):
        r, c = x.shape
        xb = x.view(r // 128, 128, c // 128, 128).float()
        s = FP8_MAX / xb.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-12)
        return (xb * s).clamp(-FP8_MAX, FP8_MAX).to(FP8).view(r, c), s

    def tensorwise_and_transpose(x):
        s = FP8_MAX / x.abs().amax().float().clamp(min=1e-12)
        q = (x.float() * s).clamp(-FP8_MAX, FP8_MAX).to(FP8)
        return q, q.t().contiguous(), s

    fns = [("tensorwise", tensorwise, 3), ("rowwise", rowwise, 3), ("blockwise_1x128", block_1x128, 3),
           ("blockwise_128x128", block_128x128, 3), ("tensorwise_plus_transpose_outputs", tensorwise_and_transpose, 4)]
    for rows, cols in ((8192, 8192), (16384, 4096)):
        x = torch.randn(rows, cols, device=dev, dtype=BF16)
        n = rows * cols
        for name, fn, ideal_per_elem in fns:
            if time.time() - T0 > deadline_s:
                ERRORS.append({"case": f"fp8_compiled {name} {rows}x{cols}", "error": "skipped: time budget"})
                log(f"fp8 compiled {name} {rows}x{cols}: skipped, time budget")
                continue
            try:
                torch._dynamo.reset()
                cf = torch.compile(fn, dynamic=False)
                t_c0 = time.time()
                cf(x)
                torch.cuda.synchronize()
                compile_s = time.time() - t_c0
                t = bench(lambda: cf(x))
                ideal = ideal_per_elem * n
                res.append({"recipe": name, "shape": [rows, cols], "impl": "torch.compile (inductor)", "median_s": t["median_s"],
                            "timing": t, "ideal_fused_bytes": ideal, "effective_gbps_vs_ideal": ideal / t["median_s"] / 1e9,
                            "compile_s": compile_s})
                log(f"fp8 compiled {name} {rows}x{cols}: {t['median_s']*1e6:.0f} us, {ideal/t['median_s']/1e9:.0f} GB/s vs "
                    f"fused ideal (compile {compile_s:.1f} s)")
            except Exception as ex:
                fail(f"fp8_compiled {name} {rows}x{cols}", ex)
        del x
        free()
    return res


def start_document(schema):
    """The output document's head: its schema and the device, logged."""
    out = {"schema": schema}
    try:
        out["device"] = device_facts()
        log(f"device {out['device']['name']}, {out['device']['sm_count']} SMs, torch {torch.__version__}, CUDA {torch.version.cuda}")
    except Exception as ex:
        fail("device_facts", ex)
    return out


def finish_document(out):
    """Clocks at the end, the errors, the elapsed time; the document on stdout."""
    try:
        sm_mhz, watts = clocks()
        out.setdefault("device", {})["nvml_end"] = {"sm_mhz": sm_mhz, "watts": watts}
    except Exception:
        pass
    out["errors"] = ERRORS
    out["elapsed_s"] = time.time() - T0
    log(f"done in {out['elapsed_s']:.0f} s, {len(ERRORS)} errors")
    print(json.dumps(out, indent=1))


def main():
    out = start_document("ridgeline.gpu-measurements-moe-fp8-decode/1")
    out["method"] = ("CUDA events; each sample = back-to-back calls_per_sample calls (>= 0.5 ms) / calls; median of "
                     f"{SAMPLES} samples after 3 warm-up calls; no L2 flush; bf16 random normal operands; forward only")
    torch.backends.cuda.matmul.allow_tf32 = False
    with torch.no_grad():
        sections = [
            ("moe_grouped_gemm", moe_gemms),
            ("router_permute", router_permute),
        ]
        for key, fn in sections:
            try:
                out[key] = fn()
            except Exception as ex:
                fail(key, ex)
            free()
        out["moe_notes"] = (f"expert parallelism {EP}: 16 local experts; rows_total = tokens*top_k/{EP} (tokens routed by the EP group, "
                            "evenly balanced); rows_per_expert = tokens*top_k/128; dense = one torch.mm [rows_total,K]x[K,N] (same FLOPs). "
                            "grouped_over_dense uses torch._grouped_mm if it ran, else the per-expert torch.mm loop. Router/permute "
                            "tokens = one GPU's tokens before dispatch; approx_bytes are rough per-kernel traffic estimates.")
        if FP8 is None:
            fail("fp8", RuntimeError("torch.float8_e4m3fn missing"))
        else:
            q = []
            for rows, cols in ((8192, 8192), (16384, 4096)):
                try:
                    q += fp8_quant_case(rows, cols)
                except Exception as ex:
                    fail(f"fp8_quantize {rows}x{cols}", ex)
                free()
            out["fp8_quantize"] = q
            out["fp8_cast_path"] = dict(CAST_PATH)
            out["fp8_notes"] = ("eager: amax pass = torch.linalg.vector_norm(ord=inf) (one reduction), cast pass = torch.mul(x, scale, "
                                "out=fp8 tensor) (one kernel when cast_path is mul_out_fp8); no clamp (scale = 448/amax). bytes_moved = "
                                "amax read 2N + cast read 2N + fp8 write N (+ scales); ideal_fused_bytes = 2N + N (+ scales). "
                                "*_transpose_cast recipes write x^T contiguous straight from bf16 (the backward operand).")
            try:
                out["fp8_gemm"] = fp8_gemm()
            except Exception as ex:
                fail("fp8_gemm", ex)
            free()
        try:
            out["copy_baseline_1GiB"] = copy_baseline()
        except Exception as ex:
            fail("copy_baseline", ex)
        try:
            out["decode_layer"] = {
                "model": "llama-3-8b one decoder layer", "d_model": D, "q_heads": HQ, "kv_heads": HK, "head_dim": HD, "d_ff": FF,
                "dtype": "bf16", "weight_bytes": WEIGHT_BYTES,
                "notes": ("step = RMSNorm, fused QKV, RoPE, KV-cache write at slot kv_len-1, SDPA over the whole preallocated "
                          "cache (GQA folded: 4 query heads per KV head as 4 query rows), o-proj, residual, RMSNorm, gate+up, "
                          "SiLU*up, down, residual. graph_per_layer_s = CUDA-graph replay of 4 chained layers (same weights, "
                          "re-read from HBM) / 4; graph_1_layer_s = one layer per graph; eager likewise. gbps = (weights + KV "
                          "bytes) / per-layer time; share = that / the 1 GiB copy's read+write GB/s of this run."),
                "cases": decode(out.get("copy_baseline_1GiB", {}).get("gbps_read_plus_write"))}
        except Exception as ex:
            fail("decode_layer", ex)
        if FP8 is not None:
            try:
                out["fp8_quantize_compiled"] = compiled_fp8(deadline_s=200)
            except Exception as ex:
                fail("fp8_compiled", ex)
    finish_document(out)


if __name__ == "__main__":
    main()
