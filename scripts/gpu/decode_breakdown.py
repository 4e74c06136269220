"""Splits one LLaMA-3 8B decoder layer's decode step into its operations and times each on a lent GPU
under CUDA graphs, beside the whole layer, so the kernel model's miss on small-batch decode
(tests/test_h200_decode.cpp) can be put on the operation that causes it.

Same layer, shapes and method as moe_fp8_decode.py section 4 (bf16, GQA folded into SDPA, a KV cache
preallocated at kv_len). Each operation is captured in one CUDA graph that runs it over `copies`
distinct copies of its large operand (weights or KV cache, >= 4x the L2 between them, so each call
reads HBM as it does inside a step), or 16 times over for the small elementwise ops on L2-resident
activations, and the replay's median time is divided by the calls. The layer
itself: one graph of 4 chained layers / 4, as before. Then torch.profiler (CUPTI) lists the kernels
of 4 eager layers at each shape with their device durations: the kernel count and the busy time the
graph's per-layer time is compared with.

Prints ONE JSON document (schema ridgeline.gpu-measurements-decode-breakdown/1) on stdout, progress on
stderr. Under a minute on an H200.
Run: python3 scripts/gpu/decode_breakdown.py > $OUT/decode_breakdown.json 2> $OUT/decode_breakdown.log
"""
import math

import torch
import torch.nn.functional as F

from moe_fp8_decode import (BF16, D, FF, HD, HK, HQ, WEIGHT_BYTES, Weights, bench, copy_baseline, dev, fail,
                            finish_document, free, graph_of, log, rms_norm, rope, start_document)

CASES = [(b, 1024) for b in (1, 2, 4, 8, 16, 32, 64, 128)] + [(b, 4096) for b in (1, 8, 32, 64)]


def l2_bytes():
    return getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20) or (50 << 20)


def n_copies(nbytes):
    return max(1, min(64, math.ceil(4 * l2_bytes() / max(nbytes, 1))))


def timed_over_copies(fn, copies):
    """fn(i) runs the operation on copy i; one graph runs all copies; seconds per call."""
    g = graph_of(lambda: [fn(i) for i in range(copies)])
    t = bench(g.replay)
    del g
    return dict(t, per_call_s=t["median_s"] / copies, copies=copies)


def case(w, batch, kv_len):
    kv_bytes_one = batch * HK * kv_len * HD * 2  # K or V of this layer
    kc_n = n_copies(2 * kv_bytes_one)
    kcs = [torch.randn(batch, HK, kv_len, HD, device=dev, dtype=BF16) for _ in range(kc_n)]
    vcs = [torch.randn(batch, HK, kv_len, HD, device=dev, dtype=BF16) for _ in range(kc_n)]
    pos = kv_len - 1
    ang = pos / (500000.0 ** (torch.arange(0, HD // 2, device=dev, dtype=torch.float32) * 2 / HD))
    cos, sin = ang.cos().to(BF16), ang.sin().to(BF16)
    x = torch.randn(batch, 1, D, device=dev, dtype=BF16)
    h = rms_norm(x, w.n1)
    qkv = F.linear(h, w.wqkv)
    q, k, v = qkv.split([HQ * HD, HK * HD, HK * HD], dim=-1)
    qr = rope(q.view(batch, HQ, HD), cos, sin)
    kr = rope(k.view(batch, HK, HD), cos, sin)
    a = torch.randn(batch, 1, HQ * HD, device=dev, dtype=BF16)
    gu = torch.randn(batch, 1, 2 * FF, device=dev, dtype=BF16)
    m = torch.randn(batch, 1, FF, device=dev, dtype=BF16)

    def copies_of(t):
        return [t] + [t.clone() for _ in range(n_copies(t.numel() * 2) - 1)]

    wqkv, wo, wgu, wd = copies_of(w.wqkv), copies_of(w.wo), copies_of(w.wgu), copies_of(w.wd)
    sink = {}

    def put(key, val):
        sink[key] = val

    small = 16  # an op on L2-resident activations: repeated in its graph so the replay's own cost is shared out
    ops = [  # name, group the kernel model prices it in, fn(i), copies, HBM bytes per call
        ("rms_norm", "elementwise", lambda i: put("h", rms_norm(x, w.n1)), small, 0),
        ("qkv_gemm", "qkv", lambda i: put("qkv", F.linear(h, wqkv[i])), len(wqkv), wqkv[0].numel() * 2),
        ("rope_q_k", "elementwise", lambda i: put("r", (rope(q.view(batch, HQ, HD), cos, sin), rope(k.view(batch, HK, HD), cos, sin))), small, 0),
        ("kv_cache_write", "attention",
         lambda i: (kcs[i % kc_n][:, :, pos].copy_(kr), vcs[i % kc_n][:, :, pos].copy_(v.view(batch, HK, HD))), max(kc_n, small), 0),
        ("sdpa", "attention", lambda i: put("a", F.scaled_dot_product_attention(qr.view(batch, HK, HQ // HK, HD), kcs[i % kc_n], vcs[i % kc_n])), max(kc_n, 4),
         2 * kv_bytes_one),
        ("o_gemm", "out", lambda i: put("o", F.linear(a, wo[i])), len(wo), wo[0].numel() * 2),
        ("residual_add", "elementwise", lambda i: put("x2", x + x), small, 0),
        ("gate_up_gemm", "mlp_in", lambda i: put("gu", F.linear(h, wgu[i])), len(wgu), wgu[0].numel() * 2),
        ("silu_mul", "elementwise", lambda i: put("m", (lambda g, u: F.silu(g) * u)(*gu.chunk(2, dim=-1))), small, 0),
        ("down_gemm", "mlp_out", lambda i: put("d", F.linear(m, wd[i])), len(wd), wd[0].numel() * 2),
    ]
    rows = []
    for name, group, fn, copies, nbytes in ops:
        try:
            t = timed_over_copies(fn, copies)
            r = {"op": name, "model_group": group, "hbm_bytes": nbytes, **t}
            if nbytes:
                r["gbps"] = nbytes / t["per_call_s"] / 1e9
            rows.append(r)
        except Exception as ex:
            fail(f"op {name} b{batch} kv{kv_len}", ex)
    # the layer whole, as moe_fp8_decode.py times it: 4 chained layers in one graph / 4
    def step(y):
        hh = rms_norm(y, w.n1)
        qq, kk, vv = F.linear(hh, w.wqkv).split([HQ * HD, HK * HD, HK * HD], dim=-1)
        qq = rope(qq.view(batch, HQ, HD), cos, sin)
        kk = rope(kk.view(batch, HK, HD), cos, sin)
        kcs[0][:, :, pos].copy_(kk)
        vcs[0][:, :, pos].copy_(vv.view(batch, HK, HD))
        aa = F.scaled_dot_product_attention(qq.view(batch, HK, HQ // HK, HD), kcs[0], vcs[0])
        y = y + F.linear(aa.reshape(batch, 1, HQ * HD), w.wo)
        g, u = F.linear(rms_norm(y, w.n2), w.wgu).chunk(2, dim=-1)
        return y + F.linear(F.silu(g) * u, w.wd)

    def four():
        y = x
        for _ in range(4):
            y = step(y)
        sink["y4"] = y

    layer = None
    try:
        g4 = graph_of(four)
        layer = bench(g4.replay)
        del g4
    except Exception as ex:
        fail(f"layer b{batch} kv{kv_len}", ex)
    kernels = None
    kernels = profile_kernels(four)
    res = {"batch": batch, "kv_len": kv_len, "kv_bytes": 2 * kv_bytes_one, "weight_bytes": WEIGHT_BYTES, "ops": rows,
           "ops_sum_s": sum(r["per_call_s"] for r in rows),
           "layer_graph_4_layers": layer, "layer_per_layer_s": layer["median_s"] / 4 if layer else None,
           "eager_kernels_4_layers": kernels}
    del kcs, vcs, wqkv, wo, wgu, wd, sink
    return res


def profile_kernels(fn):
    try:
        from torch.profiler import ProfilerActivity, profile
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        kern = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        names = {}
        for e in kern:
            s = names.setdefault(e.name, {"count": 0, "device_s": 0.0})
            s["count"] += 1
            s["device_s"] += e.device_time_total * 1e-6 if hasattr(e, "device_time_total") else e.cuda_time_total * 1e-6
        return {"kernels": len(kern), "busy_s": sum(v["device_s"] for v in names.values()),
                "by_name": [{"name": k[:160], **v} for k, v in sorted(names.items(), key=lambda kv: -kv[1]["device_s"])]}
    except Exception as ex:
        fail("profile", ex)
        return None


def main():
    out = start_document("ridgeline.gpu-measurements-decode-breakdown/1")
    out["method"] = ("CUDA events, median of 30 samples (each >= 0.5 ms of back-to-back replays); each op captured in one CUDA "
                     "graph over `copies` distinct copies of its weights or KV cache (>= 4x L2 in all), or 16 calls for "
                     "elementwise ops, and divided by the calls; small activations stay in L2 as in a step; layer = graph of 4 chained layers / 4 (same weights).")
    torch.backends.cuda.matmul.allow_tf32 = False
    with torch.no_grad():
        try:
            out["copy_baseline_1GiB"] = copy_baseline()
        except Exception as ex:
            fail("copy_baseline", ex)
        w = Weights()
        cases = []
        for batch, kv_len in CASES:
            try:
                r = case(w, batch, kv_len)
                cases.append(r)
                log(f"b{batch} kv{kv_len}: layer {1e6 * (r['layer_per_layer_s'] or 0):.1f} us, ops sum {1e6 * r['ops_sum_s']:.1f} us: "
                    + ", ".join(f"{o['op']} {1e6 * o['per_call_s']:.1f}" for o in r["ops"]))
            except Exception as ex:
                fail(f"case b{batch} kv{kv_len}", ex)
            free()
        out["cases"] = cases
    finish_document(out)


if __name__ == "__main__":
    main()
