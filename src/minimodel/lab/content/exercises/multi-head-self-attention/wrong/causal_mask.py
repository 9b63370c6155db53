"""Wrong: a causal mask belongs to a decoder; this is an encoder."""

import math

import numpy as np


def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):
    N, T, d = x.shape
    dh = d // num_heads

    def split(z):  # (N, T, d) -> (N, H, T, dh)
        return z.reshape(N, T, num_heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)      # (N, H, T, T)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    ctx = (weights @ v).transpose(0, 2, 1, 3).reshape(N, T, d)
    return ctx @ w_o
