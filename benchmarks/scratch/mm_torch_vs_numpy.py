"""Same GEMMs in NumPy (OpenBLAS) and torch (MKL / oneDNN): is torch's CPU GEMM the gap?"""
from _timing import compare, tune
tune("std")
import os
import numpy as np
import torch
torch.set_num_threads(int(os.environ.get("OPENBLAS_NUM_THREADS", "2")))
rng = np.random.default_rng(0)
N, d, V = 2048, 256, 8192
for name, n_in, n_out in [("c_fc", d, 4 * d), ("head", d, V)]:
    x = rng.standard_normal((N, n_in), dtype=np.float32)
    W = rng.standard_normal((n_out, n_in), dtype=np.float32)
    tx, tW = torch.from_numpy(x), torch.from_numpy(W)
    tx3 = tx.view(16, 128, n_in)
    compare({"numpy x @ W.T": lambda: x @ W.T,
             "torch x @ W.T (2-D)": lambda: tx @ tW.T,
             "torch F.linear (3-D)": lambda: torch.nn.functional.linear(tx3, tW),
             "torch x3 @ W.T (3-D)": lambda: tx3 @ tW.T},
            flops=2 * N * n_in * n_out, title=f"{name} fwd GEMM")
