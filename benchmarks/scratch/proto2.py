"""Second round of prototypes, against minimodel at f467fb0+ (Linear / SelfAttention / in-place
GELU+LayerNorm already in src). Short-row reductions go through BLAS gemv (x @ ones) and
einsum instead of ndarray.sum(-1), which NumPy runs as one small loop per row.

install(names) monkeypatches minimodel.fused in this process only.
"""
from __future__ import annotations

import math

import numpy as np

import minimodel.fused as fused
from minimodel.autograd import Function

_ONES: dict = {}


def _ones(n: int, dtype) -> np.ndarray:
    key = (n, np.dtype(dtype))
    if key not in _ONES:
        _ONES[key] = np.ones(n, dtype=dtype)
    return _ONES[key]


def _rowsum(x2: np.ndarray) -> np.ndarray:
    """Sum over the last axis of a C-contiguous 2-D array as a BLAS gemv: (N, d) @ ones(d)."""
    return x2 @ _ones(x2.shape[-1], x2.dtype)


class LayerNorm2(Function):
    """fused.LayerNorm with gemv row sums, einsum row dots and gemv column sums."""

    @staticmethod
    def forward(ctx, x, *affine, eps=1e-5):
        d = x.shape[-1]
        x2 = x.reshape(-1, d)
        inv_d = 1.0 / d
        mean = _rowsum(x2)
        mean *= inv_d  # (N,)
        x_hat = x2 - mean[:, None]  # centred (N, d)
        var = np.einsum("ij,ij->i", x_hat, x_hat)
        var *= inv_d
        var += eps
        rstd = 1.0 / np.sqrt(var)  # (N,)
        x_hat *= rstd[:, None]
        ctx.save_for_backward(x_hat, rstd, *affine)
        ctx.shape = x.shape
        if not affine:
            return x_hat.reshape(x.shape).copy()
        y = x_hat * affine[0]
        y += affine[1]
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x_hat, rstd, *affine = ctx.saved_tensors
        d = x_hat.shape[-1]
        g2 = g.reshape(-1, d)
        dx = g2 * affine[0] if affine else g2.copy()  # dx_hat (N, d)
        m2 = np.einsum("ij,ij->i", dx, x_hat)
        m2 *= 1.0 / d
        m1 = _rowsum(dx)
        m1 *= 1.0 / d
        dx -= m1[:, None]
        tmp = x_hat * m2[:, None]
        dx -= tmp
        dx *= rstd[:, None]
        dx = dx.reshape(ctx.shape)
        if not affine:
            return (dx,)
        ones_n = _ones(g2.shape[0], g2.dtype)
        dweight = np.einsum("ij,ij->j", g2, x_hat) if ctx.needs_input_grad[1] else None
        dbias = ones_n @ g2 if ctx.needs_input_grad[2] else None
        return dx, dweight, dbias


class SelfAttention2(Function):
    """fused.SelfAttention with the softmax row sum as gemv and the backward row dot as einsum."""

    @staticmethod
    def forward(ctx, qkv, n_heads, causal=False):
        B, T, d3 = qkv.shape
        d = d3 // 3
        dh = d // n_heads
        q, k, v = qkv.reshape(B, T, 3, n_heads, dh).transpose(2, 0, 3, 1, 4)
        scale = 1.0 / math.sqrt(dh)
        att = np.matmul(q, k.swapaxes(-1, -2))  # (B, H, T, T)
        att *= scale
        if causal:
            att += fused._additive_causal_mask(T, att.dtype)
        att -= att.max(axis=-1, keepdims=True)
        np.exp(att, out=att)
        sums = _rowsum(att.reshape(-1, T)).reshape(B, n_heads, T, 1)
        att /= sums
        y = np.matmul(att, v)
        ctx.save_for_backward(q, k, v, att)
        ctx.scale = scale
        return y.transpose(0, 2, 1, 3).reshape(B, T, d)

    @staticmethod
    def backward(ctx, g):
        q, k, v, att = ctx.saved_tensors
        B, H, T, dh = q.shape
        gy = g.reshape(B, T, H, dh).transpose(0, 2, 1, 3)
        dqkv = np.empty((B, T, 3, H, dh), dtype=g.dtype)
        dq, dk, dv = dqkv.transpose(2, 0, 3, 1, 4)
        np.matmul(att.swapaxes(-1, -2), gy, out=dv)
        datt = np.matmul(gy, v.swapaxes(-1, -2))  # (B, H, T, T)
        rowdot = np.einsum("ij,ij->i", datt.reshape(-1, T), att.reshape(-1, T))
        datt -= rowdot.reshape(B, H, T, 1)
        datt *= att
        datt *= ctx.scale
        np.matmul(datt, k, out=dq)
        np.matmul(datt.swapaxes(-1, -2), q, out=dk)
        return (dqkv.reshape(B, T, 3 * H * dh),)


class CrossEntropy2(Function):
    """fused.CrossEntropy with the per-chunk row sums as gemv."""

    CHUNK_ROWS = 64

    @staticmethod
    def forward(ctx, logits, targets, ignore_index=-100):
        n = logits.shape[0]
        valid = targets != ignore_index
        safe_targets = np.where(valid, targets, 0)
        probs = np.empty_like(logits)
        nll = np.empty(n, dtype=logits.dtype)
        step = CrossEntropy2.CHUNK_ROWS
        for start in range(0, n, step):
            rows, out = logits[start:start + step], probs[start:start + step]
            np.subtract(rows, rows.max(axis=1, keepdims=True), out=out)
            target_logit = out[np.arange(out.shape[0]), safe_targets[start:start + step]]
            np.exp(out, out=out)
            sums = _rowsum(out)
            nll[start:start + step] = np.log(sums) - target_logit
            out /= sums[:, None]
        count = int(valid.sum())
        loss = (nll * valid).sum() / max(count, 1)
        ctx.save_for_backward(probs, safe_targets, valid)
        ctx.count = count
        return np.asarray(loss, dtype=logits.dtype)

    backward = fused.CrossEntropy.backward


PROPOSALS = {
    "ln-gemv": lambda: setattr(fused, "LayerNorm", LayerNorm2),
    "attn-gemv": lambda: setattr(fused, "SelfAttention", SelfAttention2),
    "ce-gemv": lambda: setattr(fused, "CrossEntropy", CrossEntropy2),
}


def install(names) -> None:
    for n in names:
        PROPOSALS[n]()
