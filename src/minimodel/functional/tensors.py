"""Selecting and joining tensors: where, masked_fill, concatenate, stack, split."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from minimodel import ops
from minimodel.tensor import Tensor, as_tensor


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """Elementwise ``a`` where ``condition`` is true, else ``b`` (differentiable in a and b)."""
    cond = np.asarray(condition.data if isinstance(condition, Tensor) else condition, dtype=bool)
    a, b = _pair(a, b)
    return ops.Where.apply(a, b, condition=cond)


def masked_fill(x: Tensor, mask: Any, value: float) -> Tensor:
    """``x`` with ``value`` wherever ``mask`` is true (e.g. -inf above the causal diagonal)."""
    return where(mask, Tensor._wrap(np.asarray(value, dtype=x.dtype)), x)


def concatenate(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis."""
    tensors = [as_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError("concatenate needs at least one tensor")
    return ops.Concatenate.apply(*tensors, axis=axis)


def stack(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors of equal shape along a new axis."""
    tensors = [as_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    shapes = {t.shape for t in tensors}
    if len(shapes) != 1:
        raise ValueError(f"stack needs tensors of one shape, got {sorted(shapes)}")
    ndim = tensors[0].ndim + 1
    ax = axis % ndim
    expanded = [t.reshape(t.shape[:ax] + (1,) + t.shape[ax:]) for t in tensors]
    return ops.Concatenate.apply(*expanded, axis=ax)


def split(x: Tensor, sections: int | Sequence[int], axis: int = -1) -> list[Tensor]:
    """Split ``x`` along ``axis`` into ``sections`` equal parts or parts of the given sizes."""
    n = x.shape[axis]
    if isinstance(sections, (int, np.integer)):
        if sections <= 0 or n % sections:
            raise ValueError(f"cannot split an axis of size {n} into {sections} equal parts")
        sizes = [n // sections] * int(sections)
    else:
        sizes = [int(s) for s in sections]
        if sum(sizes) != n:
            raise ValueError(f"split sizes {sizes} add up to {sum(sizes)}, not the axis size {n}")
    pieces, start = [], 0
    ax = axis % x.ndim
    for size in sizes:
        index = (slice(None),) * ax + (slice(start, start + size),)
        pieces.append(x[index])
        start += size
    return pieces


def _pair(a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Wrap two operands as tensors, letting a scalar adopt the other operand's float dtype."""
    if isinstance(a, Tensor) and not isinstance(b, Tensor):
        return a, a._const(b)
    if isinstance(b, Tensor) and not isinstance(a, Tensor):
        return b._const(a), b
    return as_tensor(a), as_tensor(b)
