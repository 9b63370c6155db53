"""Wrong: 0 * log(0) gives nan when a singular value is exactly zero."""

import numpy as np


def effective_rank(A):
    s = np.linalg.svd(A, compute_uv=False)
    p = s / s.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.exp(-(p * np.log(p)).sum())
