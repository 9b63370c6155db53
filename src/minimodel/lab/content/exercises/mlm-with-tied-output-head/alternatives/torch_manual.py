"""A correct PyTorch solution written from scratch (no fused kernels)."""

import math

import torch

FRAMEWORK = "torch"


def _ln(x):
    mu = x.mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)


def _gelu(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def mlm_forward_tied(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, num_heads):
    N, T = input_ids.shape
    x = w_emb[input_ids] + pos_embed[:T]
    d = x.shape[-1]
    dh = d // num_heads
    for w_q, w_k, w_v, w_o, w_1, w_2 in blocks_weights:
        h = _ln(x)
        q, k, v = (t.view(N, T, num_heads, dh).transpose(1, 2) for t in (h @ w_q, h @ w_k, h @ w_v))
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)
        x = x + (att @ v).transpose(1, 2).reshape(N, T, d) @ w_o
        x = x + _gelu(_ln(x) @ w_1) @ w_2
    return x[mask_indicator > 0.5] @ w_emb.T
