"""Neural-network functions built on the autograd engine (no backward code lives here).

    import minimodel.functional as F
    loss = F.cross_entropy(logits, targets)      # logits (B, T, V), targets (B, T)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minimodel import fused, ops
from minimodel.tensor import Tensor, as_tensor

IGNORE_INDEX = -100


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x @ weight.T + bias, with weight of shape (out, in) as in PyTorch."""
    x = as_tensor(x)
    if bias is None:
        return ops.Linear.apply(x, weight)
    return ops.Linear.apply(x, weight, bias)


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """softmax(x)_i = exp(x_i) / sum_j exp(x_j), computed stably (max subtracted first)."""
    return fused.Softmax.apply(as_tensor(x), axis=axis)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """log softmax(x)_i = x_i - log sum_j exp(x_j), computed stably."""
    return fused.LogSoftmax.apply(as_tensor(x), axis=axis)


def cross_entropy(logits: Tensor, targets: Any, ignore_index: int = IGNORE_INDEX) -> Tensor:
    """Mean cross-entropy over the positions whose target is not ``ignore_index``.

    loss = mean_{n : t_n != ignore} [ log sum_v exp(logits_{n,v}) - logits_{n, t_n} ]

    Args:
        logits: (..., V) unnormalised scores.
        targets: (...) integer class ids in [0, V), or ``ignore_index`` to skip a position.
        ignore_index: the label that marks positions without a target (-100, as in PyTorch).

    Returns:
        A scalar tensor. If every position is ignored the loss is 0 (PyTorch returns nan).
    """
    logits = as_tensor(logits)
    if logits.ndim < 1:
        raise ValueError("cross_entropy needs logits with a class axis, got a scalar")
    vocab = logits.shape[-1]
    t = _check_targets(logits.shape, targets, vocab, ignore_index, "cross_entropy")
    flat_logits = logits.reshape(-1, vocab)  # (N, V)
    return fused.CrossEntropy.apply(flat_logits, Tensor._wrap(t.reshape(-1)),
                                    ignore_index=ignore_index)


def linear_cross_entropy(h: Tensor, weight: Tensor, targets: Any,
                         ignore_index: int = IGNORE_INDEX, chunk_rows: int | None = None) -> Tensor:
    """``cross_entropy(h @ weight.T, targets)`` computed in row chunks, never holding (N, V).

    Args:
        h: (..., d) hidden states.
        weight: (V, d) output matrix (``TiedHead.weight`` is the embedding itself).
        targets: (...) integer ids or ``ignore_index``.
        chunk_rows: rows per chunk; by default about 16 MiB of logits, at least 64 rows.
    """
    h, weight = as_tensor(h), as_tensor(weight)
    if weight.ndim != 2 or h.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear_cross_entropy: h of shape {h.shape} needs a weight of shape "
                         f"(V, {h.shape[-1]}), got {weight.shape}")
    t = _check_targets(h.shape, targets, weight.shape[0], ignore_index, "linear_cross_entropy")
    vocab = weight.shape[0]
    rows = chunk_rows or max(64, (16 * 2**20) // (h.dtype.itemsize * vocab))
    return fused.LinearCrossEntropy.apply(h.reshape(-1, h.shape[-1]), weight,
                                          Tensor._wrap(t.reshape(-1)),
                                          ignore_index=ignore_index, chunk_rows=int(rows))


def _check_targets(input_shape: tuple[int, ...], targets: Any, vocab: int, ignore_index: int,
                   where: str) -> np.ndarray:
    """Targets as an int array of shape ``input_shape[:-1]``, ids in [0, vocab) or ignore_index."""
    expected_shape = tuple(input_shape[:-1])
    t = targets.data if isinstance(targets, Tensor) else np.asarray(targets)
    if t.dtype.kind not in "iu":
        raise TypeError(f"{where} targets must be integer class ids, got dtype {t.dtype}; "
                        "convert with targets.astype(np.int64)")
    if t.shape != expected_shape:
        raise ValueError(f"{where}: inputs of shape {tuple(input_shape)} need targets of shape "
                         f"{expected_shape}, got {t.shape}")
    live = t[t != ignore_index]
    if live.size and (live.min() < 0 or live.max() >= vocab):
        bad = int(live.max()) if live.max() >= vocab else int(live.min())
        raise ValueError(f"{where}: target id {bad} is outside the {vocab} classes "
                         f"(valid ids are 0..{vocab - 1}, or {ignore_index} to ignore); "
                         "do the model's vocab size and the tokenizer's agree?")
    return t


def layer_norm(x: Tensor, eps: float = 1e-5, weight: Tensor | None = None,
               bias: Tensor | None = None) -> Tensor:
    """Normalise over the last axis: (x - mean) / sqrt(var + eps) [* weight + bias].

    var is the population variance (divided by d). ``weight`` and ``bias`` go together.
    """
    x = as_tensor(x)
    if (weight is None) != (bias is None):
        raise ValueError("layer_norm takes weight and bias together (or neither)")
    if weight is None:
        return fused.LayerNorm.apply(x, eps=eps)
    d = x.shape[-1]
    if weight.shape != (d,) or bias.shape != (d,):
        raise ValueError(f"layer_norm over a last axis of size {d} needs weight and bias of "
                         f"shape ({d},), got {weight.shape} and {bias.shape}")
    return fused.LayerNorm.apply(x, weight, bias, eps=eps)


def gelu(x: Tensor) -> Tensor:
    """GELU with the tanh approximation used by GPT-2: 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3)))."""
    return fused.GELU.apply(as_tensor(x))


def dropout(x: Tensor, p: float, training: bool = True,
            rng: np.random.Generator | None = None) -> Tensor:
    """Zero each element with probability ``p`` and scale survivors by 1 / (1 - p) (training only)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return x
    rng = rng if rng is not None else np.random.default_rng()
    keep = (rng.random(x.shape) >= p).astype(x.dtype) / x.dtype.type(1.0 - p)
    return x * Tensor._wrap(keep)


def causal_mask(t_q: int, t_k: int | None = None) -> np.ndarray:
    """Boolean (T_q, T_k) mask that is True where a query may NOT look (future keys).

    With a key/value cache the queries are the last ``t_q`` of ``t_k`` positions.
    """
    t_k = t_q if t_k is None else t_k
    offset = t_k - t_q
    return np.triu(np.ones((t_q, t_k), dtype=bool), k=1 + offset)


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> Tensor:
    """softmax(q k^T / sqrt(d_head) [+ causal mask]) v.

    Args:
        q: (..., T_q, d_head); k, v: (..., T_k, d_head).
        causal: if True, position i attends only to keys at positions <= i.
    """
    d_head = q.shape[-1]
    scores = (q @ k.transpose(_swap_last(k.ndim))) * (1.0 / math.sqrt(d_head))  # (..., T_q, T_k)
    if causal:
        scores = ops.masked_fill(scores, causal_mask(q.shape[-2], k.shape[-2]), -np.inf)
    return softmax(scores, axis=-1) @ v  # (..., T_q, d_head)


def _swap_last(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)
