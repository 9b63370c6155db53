"""Kernel for ``F.self_attention``: split, heads, scale, mask, softmax and the weighted sum
in one node, with dq, dk, dv written straight into one packed gradient buffer."""

from __future__ import annotations

import math

import numpy as np

from minimodel import workspace
from minimodel.autograd import Function
from minimodel.dispatch import register_kernel
from minimodel.functional.attention import check_qkv
from minimodel.tensor import Tensor

_NEG_MASKS: dict[tuple[int, np.dtype], np.ndarray] = {}


def additive_causal_mask(t: int, dtype: np.dtype) -> np.ndarray:
    """(T, T) array: 0 on and below the diagonal, -inf above (future keys); cached."""
    key = (t, np.dtype(dtype))
    if key not in _NEG_MASKS:
        _NEG_MASKS[key] = np.where(np.triu(np.ones((t, t), bool), 1), -np.inf, 0).astype(dtype)
    return _NEG_MASKS[key]


class SelfAttention(Function):
    r"""Multi-head self-attention from the packed projection: (B, T, 3d) -> (B, T, d).

    Forward per head: A = softmax(q k^T / sqrt(dh) [+ causal mask]), y = A v. Backward, with
    dA the gradient of A:

        dv = A^T dy,   dA = dy v^T,   dS = A * (dA - sum_j dA_j A_j) / sqrt(dh),
        dq = dS k,     dk = dS^T q
    """

    @staticmethod
    def forward(ctx, qkv, n_heads, causal=False):
        B, T, d3 = qkv.shape
        d = d3 // 3
        dh = d // n_heads
        q, k, v = qkv.reshape(B, T, 3, n_heads, dh).transpose(2, 0, 3, 1, 4)  # 3 x (B, H, T, dh)
        scale = 1.0 / math.sqrt(dh)
        dtype = qkv.dtype
        att = np.matmul(q, k.swapaxes(-1, -2), out=workspace.empty((B, n_heads, T, T), dtype))
        att *= scale
        if causal:
            att += additive_causal_mask(T, att.dtype)
        att -= att.max(axis=-1, keepdims=True)
        np.exp(att, out=att)
        att /= att.sum(axis=-1, keepdims=True)
        y = np.matmul(att, v, out=workspace.empty((B, n_heads, T, dh), dtype))  # (B, H, T, dh)
        ctx.save_for_backward(q, k, v, att)
        ctx.scale = scale
        out = workspace.empty((B, T, n_heads, dh), dtype)  # heads back side by side
        np.copyto(out, y.transpose(0, 2, 1, 3))
        return out.reshape(B, T, d)

    @staticmethod
    def backward(ctx, g):
        q, k, v, att = ctx.saved_tensors
        B, H, T, dh = q.shape
        gy = g.reshape(B, T, H, dh).transpose(0, 2, 1, 3)  # (B, H, T, dh) view
        dqkv = workspace.empty((B, T, 3, H, dh), g.dtype)
        dq, dk, dv = dqkv.transpose(2, 0, 3, 1, 4)  # views into dqkv
        np.matmul(att.swapaxes(-1, -2), gy, out=dv)
        datt = np.matmul(gy, v.swapaxes(-1, -2), out=workspace.empty(att.shape, g.dtype))
        datt -= np.multiply(datt, att, out=workspace.empty(att.shape, g.dtype)).sum(
            axis=-1, keepdims=True)
        datt *= att
        datt *= ctx.scale
        np.matmul(datt, k, out=dq)
        np.matmul(datt.swapaxes(-1, -2), q, out=dk)
        return (dqkv.reshape(B, T, 3 * H * dh),)


@register_kernel("self_attention")
def self_attention(qkv: Tensor, n_heads: int, causal: bool = False) -> Tensor:
    qkv = check_qkv(qkv, n_heads)  # (B, T, 3d)
    return SelfAttention.apply(qkv, n_heads=n_heads, causal=causal)
