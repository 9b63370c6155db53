"""SelfAttention fwd+bwd (the fused kernel in src): serial vs batch halves on 2 Python threads.
Run twice: OPENBLAS_NUM_THREADS=2 (BLAS threads the GEMMs) and =1 (Python threads only).
Wall time, min over interleaved repeats; needs idle cores."""
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from _timing import compare, tune

tune("std")
import numpy as np

from minimodel import fused
from minimodel.autograd import Context

pool = ThreadPoolExecutor(2)
rng = np.random.default_rng(0)
B, T, H = 16, 128, 4


def attn_fb(qkv, gy):
    ctx = Context((True,))
    fused.SelfAttention.forward(ctx, qkv, n_heads=H, causal=True)
    return fused.SelfAttention.backward(ctx, gy)


def par(fn, *arrays):
    n = arrays[0].shape[0]
    futs = [pool.submit(fn, *(x[s:s + n // 2] for x in arrays)) for s in (0, n // 2)]
    return [f.result() for f in futs]


for d in (128, 256):
    qkv = rng.standard_normal((B, T, 3 * d), dtype=np.float32)
    gy = rng.standard_normal((B, T, d), dtype=np.float32)
    compare({"serial": lambda: attn_fb(qkv, gy),
             "batch halves on 2 Python threads": lambda: par(attn_fb, qkv, gy)},
            reps=30, title=f"SelfAttention d={d} fwd+bwd, OPENBLAS_NUM_THREADS="
                           f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default(2)')}")

# Switching OpenBLAS to 1 thread only around the threaded region (process keeps 2 for GEMMs).
from minimodel.training.runtime import blas_threads, set_blas_threads  # noqa: E402

if blas_threads() == 2:
    def par_blas1(fn, *arrays):
        set_blas_threads(1)
        try:
            return par(fn, *arrays)
        finally:
            set_blas_threads(2)

    a = rng.standard_normal((2048, 256), dtype=np.float32)
    w = rng.standard_normal((256, 1024), dtype=np.float32)
    for d in (128, 256):
        qkv = rng.standard_normal((B, T, 3 * d), dtype=np.float32)
        gy = rng.standard_normal((B, T, d), dtype=np.float32)
        compare({"serial (BLAS 2 threads), then a GEMM": lambda: (attn_fb(qkv, gy), a @ w),
                 "BLAS->1, halves on 2 Python threads, BLAS->2, then a GEMM":
                     lambda: (par_blas1(attn_fb, qkv, gy), a @ w),
                 "the GEMM alone (2 BLAS threads)": lambda: a @ w,
                 "toggle only: set_blas_threads(1); set_blas_threads(2)":
                     lambda: (set_blas_threads(1), set_blas_threads(2))},
                reps=30, title=f"SelfAttention d={d} with BLAS toggled around it")
