"""Linear / head matmul: 3-D (B,T,k) @ W.T (what MatMul.forward does today) vs one 2-D GEMM."""
from _timing import compare, tune
tune("std")
import numpy as np

B, T, d, V = 16, 128, 256, 8192
rng = np.random.default_rng(0)
for name, n_in, n_out in [("c_attn", d, 3 * d), ("c_fc", d, 4 * d), ("mlp.c_proj", 4 * d, d),
                          ("head", d, V)]:
    x = rng.standard_normal((B, T, n_in), dtype=np.float32)
    W = rng.standard_normal((n_out, n_in), dtype=np.float32)
    g = rng.standard_normal((B, T, n_out), dtype=np.float32)
    fl = 2 * B * T * n_in * n_out
    compare({
        "fwd 3-D x @ W.T (today)": lambda: x @ W.T,
        "fwd (x.reshape(-1,k) @ W.T).reshape(B,T,n)": lambda: (x.reshape(-1, n_in) @ W.T).reshape(B, T, n_out),
        "fwd 3-D x @ ascontiguous(W.T)": lambda: x @ np.ascontiguousarray(W.T),
    }, flops=fl, title=f"{name} forward")
    compare({
        "bwd dx 3-D g @ W (today)": lambda: g @ W,
        "bwd dx (g.reshape(-1,n) @ W).reshape": lambda: (g.reshape(-1, n_out) @ W).reshape(B, T, n_in),
    }, flops=fl, title=f"{name} backward dx")
