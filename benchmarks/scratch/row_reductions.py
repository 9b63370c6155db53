"""Short-row reductions (the LayerNorm / softmax kind): ndarray.sum(-1) vs BLAS gemv (x @ ones)
vs einsum, on (2048, 128), (2048, 256) and the attention rows (8192 x 128).
(row max: see row_max.py — no faster formulation found.)"""
from _timing import compare, tune

tune("std")
import numpy as np

rng = np.random.default_rng(0)
for shape in [(2048, 128), (2048, 256), (8192, 128)]:
    x = rng.standard_normal(shape, dtype=np.float32)
    y = rng.standard_normal(shape, dtype=np.float32)
    ones = np.ones(shape[1], np.float32)
    ones_r = np.ones(shape[0], np.float32)
    compare({"x.sum(axis=-1)": lambda: x.sum(axis=-1),
             "x.mean(axis=-1)": lambda: x.mean(axis=-1),
             "x @ ones (gemv)": lambda: x @ ones,
             "einsum('ij->i')": lambda: np.einsum("ij->i", x),
             "x.max(axis=-1)": lambda: x.max(axis=-1)},
            reps=50, inner=5, title=f"row sum {shape}")
    compare({"(x * y).sum(-1)": lambda: (x * y).sum(-1),
             "einsum('ij,ij->i')": lambda: np.einsum("ij,ij->i", x, y),
             "(x * y) @ ones": lambda: (x * y) @ ones},
            reps=50, inner=5, title=f"row dot {shape}")
    compare({"x.sum(axis=0)": lambda: x.sum(axis=0),
             "ones_rows @ x (gemv)": lambda: ones_r @ x},
            reps=50, inner=5, title=f"column sum {shape} (dbias / dweight)")
