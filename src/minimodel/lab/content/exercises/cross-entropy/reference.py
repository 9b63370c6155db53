"""Reference: mean cross-entropy over kept positions with a stable log-sum-exp."""

import numpy as np


def cross_entropy(logits, targets, ignore_index=-100):
    V = logits.shape[-1]
    x = logits.reshape(-1, V)                                  # (P, V)
    t = targets.reshape(-1)                                    # (P,)
    keep = t != ignore_index
    x, t = x[keep], t[keep]                                    # (K, V), (K,)
    m = x.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(axis=1))          # (K,)
    return (lse - x[np.arange(len(t)), t]).mean()
