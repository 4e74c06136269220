"""Measures, on a lent GPU, how much slower a transformer layer's forward and backward run when the
chip is held busy (as in a training step) than when each call starts from an idle chip (as each
isolated kernel of tests/data/reference/gpu-kernels-h100.json did). The H100's 700 W board power
limit lowers the SM clock under sustained tensor-core load; this is the ratio a step model needs.

For each layer shape: 'idle' = median of single timed calls, each after 0.5 s of idle; 'sustained'
= the same calls back to back for several seconds, timed in windows, the last 60% of windows' median.
SM clock and board power are read (NVML) while the work runs. Prints one JSON document on stdout.
"""
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from held_busy import rested_then_held

dev = torch.device("cuda")


class Block(nn.Module):
    """A LLaMA block: RMSNorm, fused QKV, causal GQA attention (cuDNN), output projection, SwiGLU MLP."""

    def __init__(self, h, ffn, hq, hk, d):
        super().__init__()
        self.hq, self.hk, self.d = hq, hk, d
        self.n1, self.n2 = nn.RMSNorm(h), nn.RMSNorm(h)
        self.qkv = nn.Linear(h, (hq + 2 * hk) * d, bias=False)
        self.o = nn.Linear(hq * d, h, bias=False)
        self.up = nn.Linear(h, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).split([self.hq * self.d, self.hk * self.d, self.hk * self.d], dim=-1)
        q = q.view(b, s, self.hq, self.d).transpose(1, 2)
        k = k.view(b, s, self.hk, self.d).transpose(1, 2)
        v = v.view(b, s, self.hk, self.d).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, self.hq * self.d))
        g, u = self.up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


def measure(name, h, ffn, hq, hk, d, layers, seq, seconds):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    model = nn.Sequential(*[Block(h, ffn, hq, hk, d) for _ in range(layers)]).to(dev, torch.bfloat16)
    x = torch.randn(1, seq, h, device=dev, dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(1, seq, h, device=dev, dtype=torch.bfloat16)

    def step():
        model(x).backward(grad)

    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        t = rested_then_held(step, 6, seconds)
    idle_s, sustained_s = t["rested_s"], t["held_s"]
    r = {"name": name, "hidden": h, "ffn": ffn, "q_heads": hq, "kv_heads": hk, "head_dim": d, "layers": layers, "seq": seq,
         "idle_s": idle_s, "idle_samples_s": t["rested_samples_s"], "sustained_s": sustained_s, "ratio": sustained_s / idle_s,
         "sustained_sm_mhz": t["sm_mhz"], "sustained_watts": t["watts"], "windows": t["windows"]}
    print(f"{name}: idle {idle_s*1e3:.2f} ms, sustained {sustained_s*1e3:.2f} ms, ratio {r['ratio']:.3f}, "
          f"{r['sustained_sm_mhz']} MHz, {r['sustained_watts']} W", file=sys.stderr)
    return r


def main():
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "layers": []}
    # LLaMA-3 8B's block whole, and LLaMA-3 70B's block as one of 8 tensor-parallel ranks holds it.
    for args in [("llama-3-8b block, seq 8192", 4096, 14336, 32, 8, 128, 2, 8192, 8),
                 ("llama-3-70b block / tp 8, seq 8192", 8192, 3584, 8, 1, 128, 4, 8192, 8),
                 ("llama-3-8b block, seq 2048", 4096, 14336, 32, 8, 128, 4, 2048, 6)]:
        try:
            out["layers"].append(measure(*args))
        except Exception as e:
            print(f"{args[0]}: {e}", file=sys.stderr)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
