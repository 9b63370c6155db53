"""Wrong: head j takes every H-th feature (reshape to (..., dh, H)) instead of the block
j*d_head ... (j+1)*d_head - 1."""

import math

import numpy as np


def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):
    N, T, d = x.shape
    dh = d // num_heads

    def split(z):  # (N, T, d) -> (N, H, T, dh), features interleaved across heads
        return z.reshape(N, T, dh, num_heads).transpose(0, 3, 1, 2)

    q, k, v = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    ctx = (weights @ v).transpose(0, 2, 1, 3).reshape(N, T, d)
    return ctx @ w_o
