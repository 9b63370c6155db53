"""A correct PyTorch solution: FRAMEWORK = "torch" makes the judge pass torch tensors."""

import math

import torch

FRAMEWORK = "torch"


def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):
    N, T, d = x.shape
    dh = d // num_heads
    q, k, v = (t.view(N, T, num_heads, dh).transpose(1, 2) for t in (x @ w_q, x @ w_k, x @ w_v))
    att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)
    return (att @ v).transpose(1, 2).reshape(N, T, d) @ w_o
