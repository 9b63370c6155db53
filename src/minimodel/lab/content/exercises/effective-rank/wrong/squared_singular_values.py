"""Wrong: normalises the squared singular values (energy), not the singular values."""

import numpy as np


def effective_rank(A):
    s2 = np.linalg.svd(A, compute_uv=False) ** 2
    p = s2 / s2.sum()
    p = p[p > 0]
    return np.exp(-(p * np.log(p)).sum())
