"""Reductions over axes: Sum, Mean, Max.

The backward of a reduction gives the reduced axes back (as size-1 axes) and broadcasts the
gradient over them: every input entry that fed a sum receives the sum's gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minimodel.autograd import Function


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for ax in axes:
        if not -ndim <= ax < max(ndim, 1):
            raise ValueError(f"axis {ax} is out of range for a tensor with {ndim} dimensions")
        out.append(int(ax) % max(ndim, 1))
    return tuple(sorted(out))


def _expand_reduced(g: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...],
                    keepdims: bool) -> np.ndarray:
    """Give a reduced gradient its reduced axes back (size 1) so it broadcasts to ``shape``."""
    if not keepdims and len(shape) > 0:
        g = g.reshape([1 if i in axes else n for i, n in enumerate(shape)])
    return g


class Sum(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.shape, ctx.keepdims = a.shape, keepdims
        ctx.axes = normalize_axes(axis, a.ndim)
        return np.asarray(a.sum(axis=ctx.axes, keepdims=keepdims))

    @staticmethod
    def backward(ctx, g):
        g = _expand_reduced(g, ctx.shape, ctx.axes, ctx.keepdims)
        return (np.broadcast_to(g, ctx.shape),)


class Mean(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.shape, ctx.keepdims = a.shape, keepdims
        ctx.axes = normalize_axes(axis, a.ndim)
        ctx.count = int(np.prod([a.shape[i] for i in ctx.axes])) if a.ndim else 1
        return np.asarray(a.mean(axis=ctx.axes, keepdims=keepdims))

    @staticmethod
    def backward(ctx, g):
        g = _expand_reduced(g, ctx.shape, ctx.axes, ctx.keepdims) / g.dtype.type(ctx.count)
        return (np.broadcast_to(g, ctx.shape),)


class Max(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        axes = normalize_axes(axis, a.ndim)
        out = a.max(axis=axes, keepdims=True)
        ctx.save_for_backward(a, out)
        ctx.axes, ctx.keepdims = axes, keepdims
        return np.asarray(out if keepdims else out.reshape(
            [n for i, n in enumerate(a.shape) if i not in axes]))

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        g = _expand_reduced(g, a.shape, ctx.axes, ctx.keepdims)
        winners = a == out  # ties share the gradient evenly (like torch.amax)
        return (winners * (g / winners.sum(axis=ctx.axes, keepdims=True)),)
