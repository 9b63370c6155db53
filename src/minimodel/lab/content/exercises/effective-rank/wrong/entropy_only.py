"""Wrong: returns the entropy itself, forgetting the exponential."""

import numpy as np


def effective_rank(A):
    s = np.linalg.svd(A, compute_uv=False)
    p = s / s.sum()
    p = p[p > 0]
    return -(p * np.log(p)).sum()
