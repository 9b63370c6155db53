"""Kernel for ``F.self_attention``: split, heads, scale, mask, softmax and the weighted sum
in one node, with dq, dk, dv written straight into one packed gradient buffer."""

from __future__ import annotations

import math

import numpy as np

from minimodel.kernels import buffers
from minimodel.autograd import Function
from minimodel.dispatch import register_kernel
from minimodel.functional.attention import check_qkv
from minimodel.tensor import Tensor

_NEG_MASKS: dict[tuple[int, np.dtype], np.ndarray] = {}


def additive_causal_mask(t: int, dtype: np.dtype) -> np.ndarray:
    """(T, T) array added to a decoder's scores: 0 where query i may read key j, -inf where it
    may not (its weight after the softmax is then exactly 0); cached per (T, dtype)."""
    key = (t, np.dtype(dtype))
    if key not in _NEG_MASKS:
        readable = np.tril(np.ones((t, t), bool))  # (T, T): row i = query i, column j = key j
        _NEG_MASKS[key] = np.where(readable, 0, -np.inf).astype(dtype)
    return _NEG_MASKS[key]


class SelfAttention(Function):
    r"""Multi-head self-attention from the packed projection: (B, T, 3d) -> (B, T, d).

    Forward per head, with q scaled first (q_s = q / sqrt(dh), a (T, dh) array instead of a
    (T, T) pass): A = softmax(q_s k^T [+ causal mask]), y = A v. Backward, with dy the
    gradient of y and dA = dy v^T the gradient of A:

        dv = A^T dy,   dS = A * (dA - D),   dq = dS k / sqrt(dh),   dk = dS^T q_s

    where D_i = sum_j dA_ij A_ij = dy_i . y_i: the row sums come from the (T, dh) output
    instead of a (T, T) product (the same identity FlashAttention uses).
    """

    @staticmethod
    def forward(ctx, qkv, n_heads, causal=False):
        B, T, d3 = qkv.shape
        d = d3 // 3
        dh = d // n_heads
        dtype = qkv.dtype
        q, k, v = qkv.reshape(B, T, 3, n_heads, dh).transpose(2, 0, 3, 1, 4)  # 3 x (B, H, T, dh)
        scale = 1.0 / math.sqrt(dh)
        q_s = np.multiply(q, dtype.type(scale), out=buffers.empty(q.shape, dtype))
        att = np.matmul(q_s, k.swapaxes(-1, -2), out=buffers.empty((B, n_heads, T, T), dtype))
        if causal:
            att += additive_causal_mask(T, att.dtype)
        att -= att.max(axis=-1, keepdims=True)
        np.exp(att, out=att)
        # Row sums as one BLAS matrix-vector product (faster than NumPy's reduction over a
        # short last axis: BENCHMARKS.md), then one multiplication pass by the (B, H, T, 1) reciprocals.
        att *= 1.0 / (att @ np.ones(T, dtype))[..., None]
        y = np.matmul(att, v, out=buffers.empty((B, n_heads, T, dh), dtype))  # (B, H, T, dh)
        out = buffers.empty((B, T, n_heads, dh), dtype)  # heads back side by side
        np.copyto(out, y.transpose(0, 2, 1, 3))
        # Saved: q, k, v (views of the input, which the graph keeps anyway), A and the output
        # (also kept anyway: the next layer's input). q_s and y are recomputed or read from
        # those, not kept: two (B, T, d) arrays less per layer until backward.
        ctx.save_for_backward(q, k, v, att, out)
        ctx.scale = scale
        return out.reshape(B, T, d)

    @staticmethod
    def backward(ctx, g):
        q, k, v, att, out = ctx.saved_tensors
        B, H, T, dh = q.shape
        gy = g.reshape(B, T, H, dh).transpose(0, 2, 1, 3)  # (B, H, T, dh) view
        y = out.transpose(0, 2, 1, 3)  # (B, H, T, dh) view of the saved output
        dqkv = buffers.empty((B, T, 3, H, dh), g.dtype)
        dq, dk, dv = dqkv.transpose(2, 0, 3, 1, 4)  # views into dqkv
        np.matmul(att.swapaxes(-1, -2), gy, out=dv)
        row_dot = np.einsum("bhtd,bhtd->bht", gy, y)[..., None]  # D = dy . y, (B, H, T, 1)
        datt = np.matmul(gy, v.swapaxes(-1, -2), out=buffers.empty(att.shape, g.dtype))
        datt -= row_dot
        datt *= att  # dS
        scale = g.dtype.type(ctx.scale)
        np.matmul(datt, k, out=dq)
        dq *= scale
        np.matmul(datt.swapaxes(-1, -2), q, out=dk)
        dk *= scale  # dS^T q_s = (dS^T q) / sqrt(dh)
        return (dqkv.reshape(B, T, 3 * H * dh),)


@register_kernel("self_attention")
def self_attention(qkv: Tensor, n_heads: int, causal: bool = False) -> Tensor:
    qkv = check_qkv(qkv, n_heads)  # (B, T, 3d)
    return SelfAttention.apply(qkv, n_heads=n_heads, causal=causal)
