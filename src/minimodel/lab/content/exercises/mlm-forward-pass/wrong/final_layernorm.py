"""Wrong: a final LayerNorm before the head (GPT-2 has one; this spec does not)."""

import math

import numpy as np


def layer_norm(x, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)      # population variance
    return (x - mean) / np.sqrt(var + eps)


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def attention(h, w_q, w_k, w_v, w_o, num_heads):
    N, T, d = h.shape
    dh = d // num_heads

    def split(z):                                             # (N, T, d) -> (N, H, T, dh)
        return z.reshape(N, T, num_heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split(h @ w_q), split(h @ w_k), split(h @ w_v)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)      # (N, H, T, T), no mask
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return (weights @ v).transpose(0, 2, 1, 3).reshape(N, T, d) @ w_o


def encode(input_ids, w_emb, pos_embed, blocks_weights, num_heads):
    T = input_ids.shape[1]
    x = w_emb[input_ids] + pos_embed[:T]                      # (N, T, d)
    for w_q, w_k, w_v, w_o, w_mlp1, w_mlp2 in blocks_weights:
        x = x + attention(layer_norm(x), w_q, w_k, w_v, w_o, num_heads)
        x = x + gelu(layer_norm(x) @ w_mlp1) @ w_mlp2
    return x


def mlm_forward(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, w_head, num_heads):
    x = encode(input_ids, w_emb, pos_embed, blocks_weights, num_heads)
    return layer_norm(x[mask_indicator > 0.5]) @ w_head                   # gather (M, d), then (M, V)
