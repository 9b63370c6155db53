"""Line-by-line cost of fused.SelfAttention forward + backward (wall, min over repeats), for
the small (d=128, dh=32) and large (d=256, dh=64) configs, plus candidate rewrites."""
import math
import sys
import time

from _timing import tune

tune("std")
import numpy as np

from minimodel.fused import _additive_causal_mask

rng = np.random.default_rng(0)


def run(B, T, d, H, reps=30):
    dh = d // H
    qkv = rng.standard_normal((B, T, 3 * d), dtype=np.float32)
    g = rng.standard_normal((B, T, d), dtype=np.float32)
    best = {}

    def tick(name, t0):
        t = time.perf_counter()
        best[name] = min(best.get(name, 1e9), t - t0)
        return t

    for _ in range(reps):
        t = time.perf_counter()
        q, k, v = qkv.reshape(B, T, 3, H, dh).transpose(2, 0, 3, 1, 4)
        att = np.matmul(q, k.swapaxes(-1, -2)); t = tick("fwd q@k^T", t)
        att *= 1.0 / math.sqrt(dh); t = tick("fwd scale", t)
        att += _additive_causal_mask(T, att.dtype); t = tick("fwd mask add", t)
        att -= att.max(axis=-1, keepdims=True); t = tick("fwd max+sub", t)
        np.exp(att, out=att); t = tick("fwd exp", t)
        att /= att.sum(axis=-1, keepdims=True); t = tick("fwd sum+div", t)
        y = np.matmul(att, v); t = tick("fwd att@v", t)
        out = y.transpose(0, 2, 1, 3).reshape(B, T, d); t = tick("fwd merge heads (copy)", t)
        gy = g.reshape(B, T, H, dh).transpose(0, 2, 1, 3)
        dqkv = np.empty((B, T, 3, H, dh), dtype=g.dtype)
        dq, dk, dv = dqkv.transpose(2, 0, 3, 1, 4); t = tick("bwd alloc", t)
        np.matmul(att.swapaxes(-1, -2), gy, out=dv); t = tick("bwd dv = A^T gy (out=view)", t)
        datt = np.matmul(gy, v.swapaxes(-1, -2)); t = tick("bwd dA = gy v^T", t)
        datt -= (datt * att).sum(axis=-1, keepdims=True); t = tick("bwd rowdot+sub", t)
        datt *= att; t = tick("bwd *A", t)
        datt *= 1.0 / math.sqrt(dh); t = tick("bwd scale", t)
        np.matmul(datt, k, out=dq); t = tick("bwd dq = dS k (out=view)", t)
        np.matmul(datt.swapaxes(-1, -2), q, out=dk); t = tick("bwd dk = dS^T q (out=view)", t)
        # alternatives
        dq2 = np.matmul(datt, k); t = tick("  alt: dq to fresh array", t)
        dq[...] = dq2; t = tick("  alt: + copy into dqkv view", t)
    tot = sum(v for k_, v in best.items() if not k_.startswith("  "))
    fl = 2 * 2 * B * H * T * T * dh
    print(f"-- B={B} T={T} d={d} H={H} (dh={dh}): sum of best lines {1e3 * tot:.2f} ms; "
          f"GEMM part = {fl * 3 / 1e9:.2f} GFLOP fwd+bwd")
    for k_, v in best.items():
        print(f"   {k_:<34} {1e3 * v:7.3f} ms  {100 * v / tot:5.1f}%")


run(16, 128, 128, 4)
run(16, 128, 256, 4)
