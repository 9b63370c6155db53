"""Reference: effective rank (Roy & Vetterli 2007) from the singular values."""

import numpy as np


def effective_rank(A):
    s = np.linalg.svd(A, compute_uv=False)                    # (min(m, n),) singular values
    p = s / s.sum()                                           # a probability distribution
    nz = p[p > 0]                                             # 0 * log 0 = 0 by convention
    entropy = -(nz * np.log(nz)).sum()
    return np.exp(entropy)
