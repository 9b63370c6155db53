"""Do NumPy's single-threaded elementwise kernels speed up when split by rows over 2 Python
threads (ufuncs release the GIL)? Measured right after a BLAS GEMM, so OpenBLAS's worker
threads may still be spinning. Wall clock, min over interleaved repeats; needs idle cores."""
import math
from concurrent.futures import ThreadPoolExecutor

from _timing import compare, tune

tune("std")
import numpy as np

from minimodel import fused
from minimodel.autograd import Context

pool = ThreadPoolExecutor(2)
rng = np.random.default_rng(0)
B, T, d, V, H = 16, 128, 256, 8192, 4
a = rng.standard_normal((2048, 256), dtype=np.float32)
w = rng.standard_normal((256, 1024), dtype=np.float32)


def par(fn, *arrays, parts=2):
    """fn(*row_slices) on `parts` row blocks in the pool; returns list of results."""
    n = arrays[0].shape[0]
    cuts = [n * i // parts for i in range(parts + 1)]
    futs = [pool.submit(fn, *(x[cuts[i]:cuts[i + 1]] for x in arrays)) for i in range(parts)]
    return [f.result() for f in futs]


def gelu_fb(x, g):
    ctx = Context((True,))
    fused.GELU.forward(ctx, x)
    return fused.GELU.backward(ctx, g)


x = rng.standard_normal((B * T, 4 * d), dtype=np.float32)
g = rng.standard_normal((B * T, 4 * d), dtype=np.float32)
compare({"GELU fwd+bwd serial": lambda: (a @ w, gelu_fb(x, g)),
         "GELU fwd+bwd, 2 row blocks on 2 threads": lambda: (a @ w, par(gelu_fb, x, g)),
         "GEMM alone (subtract from both)": lambda: a @ w},
        title="GELU on (2048, 1024) after a GEMM")


def ln_fb(x, g, wt, bs):
    ctx = Context((True, True, True))
    fused.LayerNorm.forward(ctx, x, wt, bs, eps=1e-5)
    return fused.LayerNorm.backward(ctx, g)


xl = rng.standard_normal((B * T, d), dtype=np.float32)
gl = rng.standard_normal((B * T, d), dtype=np.float32)
wt, bs = np.ones(d, np.float32), np.zeros(d, np.float32)
compare({"LayerNorm fwd+bwd serial": lambda: ln_fb(xl, gl, wt, bs),
         "LayerNorm fwd+bwd 2 threads (dW/db partials summed)": lambda: par(lambda x_, g_: ln_fb(x_, g_, wt, bs), xl, gl)},
        title="LayerNorm (2048, 256)")


def attn_fb(qkv, gy):
    ctx = Context((True,))
    fused.SelfAttention.forward(ctx, qkv, n_heads=H, causal=True)
    return fused.SelfAttention.backward(ctx, gy)


qkv = rng.standard_normal((B, T, 3 * d), dtype=np.float32)
gy = rng.standard_normal((B, T, d), dtype=np.float32)
compare({"SelfAttention fwd+bwd serial": lambda: attn_fb(qkv, gy),
         "SelfAttention fwd+bwd, batch halves on 2 threads": lambda: par(attn_fb, qkv, gy)},
        title="SelfAttention (16, 128, 768)")


def ce_fb(logits, t):
    ctx = Context((True, False))
    fused.CrossEntropy.forward(ctx, logits, t)
    return fused.CrossEntropy.backward(ctx, np.asarray(1.0, np.float32))


lg = rng.standard_normal((B * T, V), dtype=np.float32)
tg = rng.integers(0, V, B * T)
compare({"CrossEntropy fwd+bwd serial": lambda: ce_fb(lg, tg),
         "CrossEntropy fwd+bwd 2 threads": lambda: par(ce_fb, lg, tg)},
        reps=9, title="cross-entropy (2048, 8192)")
