"""Multi-head self-attention, the GPT-2 MLP and the pre-LN transformer block.

Parameter names follow GPT-2 (``c_attn``, ``c_proj``, ``c_fc``, ``ln_1``, ``ln_2``) so that a
checkpoint maps one-to-one onto Hugging Face's ``GPT2LMHeadModel``.
"""

from __future__ import annotations

import numpy as np

import minimodel.functional as F
from minimodel import fused, ops
from minimodel.nn.layers import Dropout, LayerNorm, Linear
from minimodel.nn.module import Module
from minimodel.tensor import Tensor


class MultiHeadAttention(Module):
    """softmax(Q K^T / sqrt(d_head) [+ causal mask]) V, computed for ``n_heads`` heads at once.

    Q, K, V come from one projection ``c_attn`` (d -> 3d); the heads are concatenated and mixed
    by ``c_proj`` (d -> d).
    """

    def __init__(self, d_model: int, n_heads: int, causal: bool = False, dropout: float = 0.0,
                 bias: bool = True, rng: np.random.Generator | None = None) -> None:
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads} "
                             f"(each head gets d_model / n_heads dimensions)")
        super().__init__()
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.c_attn = Linear(d_model, 3 * d_model, bias=bias, rng=rng)
        self.c_proj = Linear(d_model, d_model, bias=bias, rng=rng)
        self.resid_dropout = Dropout(dropout, rng)

    def _heads(self, x: Tensor, B: int, T: int) -> Tensor:
        """(B, T, d) -> (B, H, T, d_head)."""
        return x.reshape(B, T, self.n_heads, self.d_model // self.n_heads).transpose(0, 2, 1, 3)

    def forward(self, x: Tensor, cache: "KVCache | None" = None) -> Tensor:
        """x (B, T, d) -> (B, T, d). With a ``cache`` (generation, no gradients) the new keys
        and values are appended to the cached ones and x holds only the new positions."""
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"MultiHeadAttention expects (B, T, {self.d_model}), got {x.shape}")
        B, T, d = x.shape
        if cache is None:  # training and scoring: one fused node (see fused.SelfAttention)
            y = fused.SelfAttention.apply(self.c_attn(x), n_heads=self.n_heads,
                                          causal=self.causal)  # (B, T, d)
            return self.resid_dropout(self.c_proj(y))
        q, k, v = ops.split(self.c_attn(x), 3, axis=-1)  # 3 x (B, T, d)
        q, k, v = self._heads(q, B, T), self._heads(k, B, T), self._heads(v, B, T)  # (B, H, T, dh)
        if cache is not None:
            k, v = cache.extend(self, k, v)  # (B, H, T_past + T, dh)
        y = F.scaled_dot_product_attention(q, k, v, causal=self.causal)  # (B, H, T, dh)
        y = y.transpose(0, 2, 1, 3).reshape(B, T, d)  # heads side by side again
        return self.resid_dropout(self.c_proj(y))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, causal={self.causal}"


class KVCache:
    """Keys and values of past positions, per attention layer, for fast generation.

    Without a cache, generating token t re-runs attention over all t previous positions in
    every layer, so each new token costs O(t) projections. With it, only the new position is
    projected; the cost that still grows with t is the attention itself (one query against
    t keys). Used under ``no_grad`` only.
    """

    def __init__(self) -> None:
        # per layer: (keys, values) buffers of shape (B, H, capacity, dh), grown geometrically
        self._store: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._length: dict[int, int] = {}

    @property
    def length(self) -> int:
        """Number of positions cached so far."""
        return next(iter(self._length.values()), 0)

    def extend(self, layer: Module, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        key, new = id(layer), k.shape[2]
        used = self._length.get(key, 0)
        if key not in self._store or used + new > self._store[key][0].shape[2]:
            capacity = max(2 * (used + new), 16)
            B, H, _, dh = k.shape
            grown = tuple(np.empty((B, H, capacity, dh), dtype=k.dtype) for _ in range(2))
            if used:
                for old, buf in zip(self._store[key], grown):
                    buf[:, :, :used] = old[:, :, :used]
            self._store[key] = grown
        keys, values = self._store[key]
        keys[:, :, used:used + new] = k.data  # write in place: no O(t) copy per token
        values[:, :, used:used + new] = v.data
        self._length[key] = used + new
        return (Tensor._wrap(keys[:, :, :used + new]), Tensor._wrap(values[:, :, :used + new]))


class MLP(Module):
    """GPT-2 feed-forward: c_proj(gelu(c_fc(x))), hidden size ``mlp_ratio * d``."""

    def __init__(self, d_model: int, mlp_ratio: int = 4, dropout: float = 0.0, bias: bool = True,
                 rng: np.random.Generator | None = None) -> None:
        super().__init__()
        self.c_fc = Linear(d_model, mlp_ratio * d_model, bias=bias, rng=rng)
        self.c_proj = Linear(mlp_ratio * d_model, d_model, bias=bias, rng=rng)
        self.dropout = Dropout(dropout, rng)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(Module):
    """Pre-LN transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x)).

    ``bias=False, affine=False, mlp_ratio=1`` gives the bare block of the lab's seed exercise
    (no biases, LayerNorm without scale/shift, d_ff = d).
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

    def forward(self, x: Tensor, cache: "KVCache | None" = None) -> Tensor:
        x = x + self.attn(self.ln_1(x), cache)  # (B, T, d)
        return x + self.mlp(self.ln_2(x))  # (B, T, d)
