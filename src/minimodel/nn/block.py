"""The GPT-2 feed-forward network and the pre-LN transformer block."""

from __future__ import annotations

import numpy as np

import minimodel.functional as F
from minimodel.nn.attention import KVCache, MultiHeadAttention
from minimodel.nn.dropout import Dropout
from minimodel.nn.linear import Linear
from minimodel.nn.module import Module
from minimodel.nn.norm import LayerNorm
from minimodel.tensor import Tensor


class MLP(Module):
    """GPT-2 feed-forward: c_proj(gelu(c_fc(x))), hidden size ``mlp_ratio * d``."""

    def __init__(self, d_model: int, mlp_ratio: int = 4, dropout: float = 0.0, bias: bool = True,
                 rng: np.random.Generator | None = None) -> None:
        super().__init__()
        self.c_fc = Linear(d_model, mlp_ratio * d_model, bias=bias, rng=rng)
        self.c_proj = Linear(mlp_ratio * d_model, d_model, bias=bias, rng=rng)
        self.dropout = Dropout(dropout, rng)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))  # (..., d)


class Block(Module):
    """Pre-LN transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x)).

    ``bias=False, affine=False, mlp_ratio=1`` gives the bare block: no biases, LayerNorm
    without scale/shift, d_ff = d.
    """

    def __init__(self, d_model: int, n_heads: int, causal: bool = True, dropout: float = 0.0,
                 mlp_ratio: int = 4, eps: float = 1e-5, bias: bool = True, affine: bool = True,
                 rng: np.random.Generator | None = None) -> None:
        super().__init__()
        self.ln_1 = LayerNorm(d_model, eps, elementwise_affine=affine)
        self.attn = MultiHeadAttention(d_model, n_heads, causal=causal, dropout=dropout,
                                       bias=bias, rng=rng)
        self.ln_2 = LayerNorm(d_model, eps, elementwise_affine=affine)
        self.mlp = MLP(d_model, mlp_ratio, dropout, bias, rng)

    def forward(self, x: Tensor, cache: KVCache | None = None) -> Tensor:
        x = x + self.attn(self.ln_1(x), cache)  # (B, T, d)
        return x + self.mlp(self.ln_2(x))  # (B, T, d)
