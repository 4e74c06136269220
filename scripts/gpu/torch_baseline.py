"""Measures, on a lent GPU, what the cuda backend is checked against in the same run.

1. GEMMs at the shapes of tests/data/reference/gpu-kernels-h100.json through PyTorch (cuBLAS),
   with that file's method: CUDA events, L2 flushed (256 MiB write) before each call, 5 warm-ups,
   median of 30. Says whether this chip reproduces the reference.
2. Sustained GEMM streams: the same GEMM back to back for several seconds (no flush, as a training
   step's kernels run), in windows of ~0.25 s, with the SM clock and board power read while each
   window runs. Says whether a chip held busy keeps the isolated kernels' rate (power limit).
3. Attention (cuDNN and FlashAttention-2 through scaled_dot_product_attention) at the reference's shapes.
Prints one JSON document on stdout.
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F

from held_busy import clocks, event_s, windows

dev = torch.device("cuda")
flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)


def timed(fn, warmups=5, samples=30, flush_l2=True):
    for _ in range(warmups):
        fn()
    out = []
    for i in range(samples):
        if flush_l2:
            flush.fill_(i & 0xFF)
        out.append(event_s(fn))
    return statistics.median(out)


def operands(m, k, n, dtype):
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    if dtype == "bf16":
        bt = b.t()
        return lambda: torch.mm(a, bt)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    one = torch.ones((), device=dev)
    return lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)


def sustained(name, fn, flops, seconds):
    single = timed(fn, samples=10, flush_l2=False)
    held = [{"t_s": w["t_s"], "tflops": flops / w["s"] / 1e12, "sm_mhz": w["sm_mhz"], "watts": w["watts"]}
            for w in windows(fn, single, seconds)]
    return {"name": name, "flops": flops, "first_call_tflops": flops / single / 1e12, "windows": held}


def main():
    ref = json.load(open(sys.argv[1]))
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
              "gemm": [], "sustained": [], "attention": []}
    sm_mhz, watts = clocks()
    result["idle"] = {"sm_mhz": sm_mhz, "watts": watts}
    for g in ref["gemm"]:
        dtype = "bf16" if g["dtype"] == "bf16" else "fp8"
        fn = operands(g["M"], g["K"], g["N"], dtype)
        s = timed(fn)
        result["gemm"].append({"dtype": g["dtype"], "M": g["M"], "K": g["K"], "N": g["N"], "seconds": s,
                               "reference_seconds": g["seconds"]})
        print(f"gemm {dtype} {g['M']}x{g['K']}x{g['N']}: {s*1e6:.1f} us (reference {g['seconds']*1e6:.1f})", file=sys.stderr)
    for m, k, n, dtype, secs in [(4096, 8192, 8192, "bf16", 8), (16384, 8192, 8192, "bf16", 6), (4096, 8192, 8192, "fp8", 6)]:
        try:
            r = sustained(f"{dtype} {m}x{k}x{n}", operands(m, k, n, dtype), 2.0 * m * k * n, secs)
        except Exception as e:
            print(f"sustained {dtype} {m}x{k}x{n}: {e}", file=sys.stderr)
            continue
        result["sustained"].append(r)
        w = r["windows"]
        print(f"sustained {r['name']}: first {r['first_call_tflops']:.0f}, windows {w[0]['tflops']:.0f} -> {w[-1]['tflops']:.0f} TFLOP/s, "
              f"clock {w[0]['sm_mhz']} -> {w[-1]['sm_mhz']} MHz, {w[-1]['watts']} W", file=sys.stderr)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for a in ref["attention"]:
        backend = SDPBackend.CUDNN_ATTENTION if a["kernel"] == "cudnn" else SDPBackend.FLASH_ATTENTION
        b, s, d, hq, hk = a["batch"], a["seq"], a["head_dim"], a["q_heads"], a["kv_heads"]
        q = torch.randn(b, hq, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
        kk = torch.randn(b, hk, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(b, hk, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
        grad = torch.randn(b, hq, s, d, device=dev, dtype=torch.bfloat16)
        try:
            with sdpa_kernel(backend):
                fwd = lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True, enable_gqa=True)
                def both():
                    fwd().backward(grad)
                f_s, fb_s = timed(fwd, samples=20), timed(both, samples=20)
        except Exception as e:  # one kernel family refused: say so, measure the rest
            print(f"attention {a['kernel']} seq {s}: {e}", file=sys.stderr)
            continue
        result["attention"].append({"kernel": a["kernel"], "seq": s, "batch": b, "forward_s": f_s, "forward_backward_s": fb_s,
                                    "reference_forward_s": a["forward_s"], "reference_forward_backward_s": a["forward_backward_s"]})
        print(f"attention {a['kernel']} seq {s}: fwd {f_s*1e6:.0f} us (ref {a['forward_s']*1e6:.0f}), fwd+bwd {fb_s*1e6:.0f} "
              f"(ref {a['forward_backward_s']*1e6:.0f})", file=sys.stderr)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
