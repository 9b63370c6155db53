"""Row max over short rows (attention softmax): ndarray.max(-1) vs a halving tree of np.maximum."""
from _timing import compare, tune

tune("std")
import numpy as np

rng = np.random.default_rng(0)


def tree_max(x):
    """max over the last axis (a power of two) by repeatedly folding halves: contiguous
    elementwise np.maximum passes instead of NumPy's per-row reduction loop."""
    n = x.shape[-1]
    m = np.maximum(x[..., : n // 2], x[..., n // 2:])
    n //= 2
    while n > 8:
        np.maximum(m[..., : n // 2], m[..., n // 2: n], out=m[..., : n // 2])
        n //= 2
    return m[..., :n].max(axis=-1, keepdims=True)


for shape in [(16, 4, 128, 128), (2048, 8192)]:
    x = rng.standard_normal(shape, dtype=np.float32)
    assert np.array_equal(tree_max(x), x.max(axis=-1, keepdims=True))
    compare({"x.max(axis=-1, keepdims=True)": lambda: x.max(axis=-1, keepdims=True),
             "halving np.maximum tree": lambda: tree_max(x)},
            reps=30, inner=3, title=f"row max {shape}")
    ones = np.ones(shape[-1], np.float32)
    compare({"x.sum(axis=-1)": lambda: x.sum(axis=-1),
             "x @ ones (gemv)": lambda: x @ ones},
            reps=30, inner=3, title=f"row sum {shape}")
