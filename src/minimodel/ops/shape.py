"""Primitives that move values around without arithmetic: reshape, transpose, indexing,
selection and concatenation. Their backward puts each gradient entry back where its value
came from."""

from __future__ import annotations

from typing import Any

import numpy as np

from minimodel.autograd import Function, unbroadcast


class Reshape(Function):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        try:
            return a.reshape(shape)
        except ValueError:
            raise ValueError(f"cannot reshape a tensor of shape {a.shape} ({a.size} elements) "
                             f"into shape {tuple(shape)}") from None

    @staticmethod
    def backward(ctx, g):
        return (g.reshape(ctx.shape),)


class Transpose(Function):
    @staticmethod
    def forward(ctx, a, axes=None):
        axes = tuple(range(a.ndim))[::-1] if axes is None else tuple(axes)
        if sorted(int(x) % max(a.ndim, 1) for x in axes) != list(range(a.ndim)):
            raise ValueError(f"transpose axes {axes} are not a permutation of the "
                             f"{a.ndim} axes of a tensor of shape {a.shape}")
        # Normalise negative axes first: argsort of e.g. (0, -1, 1) is not the inverse.
        axes = tuple(int(x) % max(a.ndim, 1) for x in axes)
        ctx.inverse = tuple(np.argsort(axes))
        return a.transpose(axes)

    @staticmethod
    def backward(ctx, g):
        return (g.transpose(ctx.inverse),)


def is_advanced_index(index: Any) -> bool:
    """True when ``index`` uses integer/boolean arrays (NumPy 'advanced' indexing)."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (np.ndarray, list)) for p in parts)


class GetItem(Function):
    """``a[index]``. Backward scatters ``g`` into zeros at the same index.

    With an integer-array index an entry can be picked several times, and then its gradient
    must be the *sum* of the picks: ``np.add.at`` adds repeated indices, while ``grad[i] = g``
    would keep only the last one.
    """

    @staticmethod
    def forward(ctx, a, index):
        ctx.shape, ctx.dtype, ctx.index = a.shape, a.dtype, index
        try:
            return np.asarray(a[index])
        except IndexError as exc:
            raise IndexError(f"index {index!r} is out of range for a tensor of shape "
                             f"{a.shape}: {exc}") from None

    @staticmethod
    def backward(ctx, g):
        grad = np.zeros(ctx.shape, dtype=ctx.dtype)
        if is_advanced_index(ctx.index):
            np.add.at(grad, ctx.index, g)  # repeated indices must add up, not overwrite
        else:
            grad[ctx.index] = g
        return (grad,)


class Where(Function):
    """``condition ? a : b`` elementwise (the condition is a constant boolean array)."""

    @staticmethod
    def forward(ctx, a, b, condition):
        ctx.condition, ctx.shapes = condition, (a.shape, b.shape)
        return np.where(condition, a, b)

    @staticmethod
    def backward(ctx, g):
        c = ctx.condition
        sa, sb = ctx.shapes
        return (unbroadcast(np.where(c, g, 0), sa) if ctx.needs_input_grad[0] else None,
                unbroadcast(np.where(c, 0, g), sb) if ctx.needs_input_grad[1] else None)


class Concatenate(Function):
    @staticmethod
    def forward(ctx, *arrays, axis=0):
        ctx.axis = axis
        ctx.sizes = [x.shape[axis] for x in arrays]
        return np.concatenate(arrays, axis=axis)

    @staticmethod
    def backward(ctx, g):
        cuts = np.cumsum(ctx.sizes)[:-1]
        return tuple(np.split(g, cuts, axis=ctx.axis))
