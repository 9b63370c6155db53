"""Multi-head self-attention, and the key/value cache used for fast generation.

Parameter names follow GPT-2 (``c_attn``, ``c_proj``) so that a checkpoint maps one-to-one
onto Hugging Face's ``GPT2LMHeadModel``.
"""

from __future__ import annotations

import numpy as np

import minimodel.functional as F
from minimodel.nn.dropout import Dropout
from minimodel.nn.linear import Linear
from minimodel.nn.module import Module
from minimodel.tensor import Tensor


class MultiHeadAttention(Module):
    """softmax(Q K^T / sqrt(d_head) [+ causal mask]) V, computed for ``n_heads`` heads at once.

    Q, K, V come from one projection ``c_attn`` (d -> 3d); the heads are concatenated and mixed
    by ``c_proj`` (d -> d). The attention itself is ``F.self_attention``.
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

    def forward(self, x: Tensor, cache: "KVCache | None" = None) -> Tensor:
        """x (B, T, d) -> (B, T, d).

        With a ``cache`` (generation, no gradients) x holds only the new positions: their keys
        and values are appended to the cached ones, and their queries attend to all of them.
        """
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"MultiHeadAttention expects (B, T, {self.d_model}), got {x.shape}")
        qkv = self.c_attn(x)  # (B, T, 3d)
        if cache is None:
            y = F.self_attention(qkv, self.n_heads, self.causal)  # (B, T, d)
        else:
            q, k, v = (F.split_heads(z, self.n_heads) for z in F.split(qkv, 3, axis=-1))
            k, v = cache.extend(self, k, v)  # (B, H, T_past + T, dh)
            y = F.merge_heads(F.scaled_dot_product_attention(q, k, v, self.causal))
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
