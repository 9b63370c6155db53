"""GFLOP/s of every GEMM shape in the d=256/V=8192 step: NumPy (OpenBLAS) vs torch, incl. the
transposed-operand layouts the autograd actually produces (x @ W.T, g.T @ x ...)."""
import statistics, sys, time
sys.path.insert(0, __file__.rsplit("/", 2)[0])
from _alloc import tune
tune("std")
import numpy as np
import torch
torch.set_num_threads(2)

N, d, V = 2048, 256, 8192
rng = np.random.default_rng(0)
def r(*s): return rng.standard_normal(s, dtype=np.float32)

def bench(f, flops, reps=None):
    f()
    reps = reps or max(5, int(1e10 / flops))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return flops / statistics.median(ts) / 1e9

cases = []
for (name, n_out) in [("head", V), ("c_attn", 3 * d), ("c_fc", 4 * d), ("attn.c_proj", d)]:
    x, W, g = r(N, d), r(n_out, d), r(N, n_out)
    f = 2 * N * d * n_out
    cases += [(f"{name} fwd  x @ W.T   ({N}x{d})@({d}x{n_out})", lambda x=x, W=W: x @ W.T, f),
              (f"{name} dx   g @ W     ({N}x{n_out})@({n_out}x{d})", lambda g=g, W=W: g @ W, f),
              (f"{name} dW   g.T @ x   ({n_out}x{N})@({N}x{d})", lambda g=g, x=x: g.T @ x, f)]
x, W, g = r(N, 4 * d), r(d, 4 * d), r(N, d)
f = 2 * N * d * 4 * d
cases += [("mlp.c_proj fwd  (2048x1024)@(1024x256)", lambda: x @ W.T, f),
          ("mlp.c_proj dx   (2048x256)@(256x1024)", lambda: g @ W, f),
          ("mlp.c_proj dW   (256x2048)@(2048x1024)", lambda: g.T @ x, f)]

print(f"{'GEMM':<48} {'numpy':>7} {'torch':>7}  GFLOP/s")
for name, fn, fl in cases:
    npv = bench(fn, fl)
    # same computation on torch tensors sharing memory
    tfn = fn.__defaults__
    targs = [torch.from_numpy(a) for a in tfn] if tfn else None
    if targs is not None:
        tf = lambda fn=fn, targs=targs: fn(*targs)
    else:  # closures over globals (mlp.c_proj): rebuild with torch tensors
        tx, tW, tg = map(torch.from_numpy, (x, W, g))
        tf = {"fwd": lambda: tx @ tW.T, "dx ": lambda: tg @ tW, "dW ": lambda: tg.T @ tx}[name.split()[1][:3].ljust(3)]
    tv = bench(tf, fl)
    print(f"{name:<48} {npv:7.1f} {tv:7.1f}")
