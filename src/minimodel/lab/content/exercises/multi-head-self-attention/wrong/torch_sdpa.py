"""Forbidden: PyTorch's fused attention does the whole exercise."""

import torch
import torch.nn.functional as F

FRAMEWORK = "torch"


def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):
    N, T, d = x.shape
    q, k, v = (t.view(N, T, num_heads, -1).transpose(1, 2) for t in (x @ w_q, x @ w_k, x @ w_v))
    ctx = F.scaled_dot_product_attention(q, k, v)
    return ctx.transpose(1, 2).reshape(N, T, d) @ w_o
