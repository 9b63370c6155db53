"""Scaled dot-product attention and multi-head self-attention (Vaswani et al. 2017)."""

from __future__ import annotations

import math

import numpy as np

from minimodel.dispatch import replaceable
from minimodel.functional.activations import softmax
from minimodel.functional.tensors import masked_fill, split
from minimodel.tensor import Tensor, as_tensor


def causal_mask(t_q: int, t_k: int | None = None) -> np.ndarray:
    """Boolean (T_q, T_k) mask that is True where a query may NOT look (future keys).

    With a key/value cache the queries are the last ``t_q`` of ``t_k`` positions.
    """
    t_k = t_q if t_k is None else t_k
    offset = t_k - t_q
    return np.triu(np.ones((t_q, t_k), dtype=bool), k=1 + offset)


def check_qkv(qkv: Tensor, n_heads: int) -> Tensor:
    """``qkv`` as a Tensor, after checking it is (B, T, 3 d) with d divisible by ``n_heads``."""
    qkv = as_tensor(qkv)
    if qkv.ndim != 3 or qkv.shape[-1] % 3 or n_heads <= 0 or (qkv.shape[-1] // 3) % n_heads:
        raise ValueError(f"self_attention expects qkv of shape (B, T, 3 * d) with d divisible "
                         f"by n_heads={n_heads}, got {qkv.shape}")
    return qkv


def split_heads(x: Tensor, n_heads: int) -> Tensor:
    """(B, T, d) -> (B, H, T, d / H): each head sees its own slice of the features."""
    B, T, d = x.shape
    return x.reshape(B, T, n_heads, d // n_heads).transpose(0, 2, 1, 3)


def merge_heads(y: Tensor) -> Tensor:
    """(B, H, T, dh) -> (B, T, H * dh): the heads' outputs side by side again."""
    B, H, T, dh = y.shape
    return y.transpose(0, 2, 1, 3).reshape(B, T, H * dh)


@replaceable
def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False
                                 ) -> Tensor:
    r"""softmax(q k^T / sqrt(d_head) [+ causal mask]) v.

    Args:
        q: (..., T_q, d_head); k, v: (..., T_k, d_head).
        causal: if True, query i attends only to keys at positions <= i (masked scores are
            -inf, so they get probability exactly 0).

    Dividing by sqrt(d_head) keeps the scores' variance near 1 for unit-variance q and k, so
    the softmax does not saturate as heads get wider.
    """
    d_head = q.shape[-1]
    scores = (q @ k.transpose(_swap_last(k.ndim))) * (1.0 / math.sqrt(d_head))  # (..., Tq, Tk)
    if causal:
        scores = masked_fill(scores, causal_mask(q.shape[-2], k.shape[-2]), -np.inf)
    return softmax(scores, axis=-1) @ v  # (..., T_q, d_head)


@replaceable
def self_attention(qkv: Tensor, n_heads: int, causal: bool = False) -> Tensor:
    r"""Multi-head self-attention from the packed projection: (B, T, 3d) -> (B, T, d).

    ``qkv`` is the output of one Linear d -> 3d (GPT-2's ``c_attn``): queries, keys and
    values side by side. Each is split into H heads of size dh = d / H; every head attends on
    its own,

        A_h = softmax(q_h k_h^T / sqrt(dh) [+ causal mask]),   y_h = A_h v_h,

    and the heads are concatenated again. ``causal=True`` is the decoder (GPT),
    ``causal=False`` the bidirectional encoder (the masked LM).
    """
    qkv = check_qkv(qkv, n_heads)  # (B, T, 3d)
    q, k, v = split(qkv, 3, axis=-1)  # 3 x (B, T, d)
    y = scaled_dot_product_attention(split_heads(q, n_heads), split_heads(k, n_heads),
                                     split_heads(v, n_heads), causal)  # (B, H, T, dh)
    return merge_heads(y)  # (B, T, d)


def _swap_last(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)
