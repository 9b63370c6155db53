"""The differentiable primitives and their backward rules, readable as a table.

Notation: ``g`` is dL/d(out), the gradient arriving from above; each backward returns
dL/d(input) for every positional input (``None`` where no gradient is needed).

    op            forward                 backward
    Add           a + b                   g, g                       (unbroadcast each)
    Sub           a - b                   g, -g
    Mul           a * b                   g * b, g * a
    Div           a / b                   g / b, -g * a / b^2
    Neg           -a                      -g
    Pow(p)        a^p                     g * p * a^(p-1)
    Exp           e^a                     g * out
    Log           ln a                    g / a
    Tanh          tanh a                  g * (1 - out^2)
    Sqrt          sqrt a                  g / (2 out)
    Sum/Mean      reduce over axes        g broadcast back (divided by the count for Mean)
    Max           max over axes           g to the arg-max entries (split evenly on ties)
    MatMul        a @ b                   g @ b^T, a^T @ g           (batched, broadcasting)
    Linear        x @ W^T + b             g @ W, g^T @ x, sum(g)     (one 2-D GEMM over rows)
    Reshape       a.reshape(s)            g.reshape(a.shape)
    Transpose     a.transpose(p)          g.transpose(p^-1)
    GetItem       a[i]                    zeros, then scatter-add g at i
    Embedding     W[ids]                  scatter-add g rows into dW at ids (flat 1-D indices)
    Where(c)      c ? a : b               g where c, g where not c
    Concatenate   [a; b; ...] on axis     g split back into the pieces

Fused composites (softmax, log-softmax, cross-entropy, layer norm, GELU) live in
:mod:`minimodel.fused`; they have the same Function shape.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from minimodel.autograd import Context, Function, _unbroadcast
from minimodel.tensor import Tensor, as_tensor


def _normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
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


def _check_broadcast(a: np.ndarray, b: np.ndarray, op: str) -> None:
    """Refuse shapes that do not broadcast, in our words rather than NumPy's."""
    if a.shape != b.shape:
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise ValueError(f"{op}: shapes {a.shape} and {b.shape} do not broadcast (each axis, "
                             "aligned from the right, must be equal or 1)") from None


# --------------------------------------------------------------------------- elementwise
class Add(Function):
    @staticmethod
    def forward(ctx: Context, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        _check_broadcast(a, b, "add")
        ctx.shapes = (a.shape, b.shape)
        return a + b

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return (_unbroadcast(g, sa) if ctx.needs_input_grad[0] else None,
                _unbroadcast(g, sb) if ctx.needs_input_grad[1] else None)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        _check_broadcast(a, b, "sub")
        ctx.shapes = (a.shape, b.shape)
        return a - b

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return (_unbroadcast(g, sa) if ctx.needs_input_grad[0] else None,
                _unbroadcast(-g, sb) if ctx.needs_input_grad[1] else None)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        _check_broadcast(a, b, "mul")
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (_unbroadcast(g * b, a.shape) if ctx.needs_input_grad[0] else None,
                _unbroadcast(g * a, b.shape) if ctx.needs_input_grad[1] else None)


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        _check_broadcast(a, b, "div")
        out = a / b
        ctx.save_for_backward(b, out)
        ctx.a_shape = a.shape
        return out

    @staticmethod
    def backward(ctx, g):
        b, out = ctx.saved_tensors
        ga = g / b
        return (_unbroadcast(ga, ctx.a_shape) if ctx.needs_input_grad[0] else None,
                _unbroadcast(-ga * out, b.shape) if ctx.needs_input_grad[1] else None)


class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, g):
        return (-g,)


class Pow(Function):
    @staticmethod
    def forward(ctx, a, exponent: float):
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        return a ** a.dtype.type(exponent) if a.dtype.kind == "f" else a ** exponent

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        p = a.dtype.type(ctx.exponent)
        return (g * p * a ** (p - 1),)


class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.saved_tensors[0],)


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, g):
        return (g / ctx.saved_tensors[0],)


class Tanh(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out = ctx.saved_tensors[0]
        return (g * (1 - out * out),)


class Sqrt(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return (g / (2 * ctx.saved_tensors[0]),)


# --------------------------------------------------------------------------- reductions
class Sum(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.shape, ctx.keepdims = a.shape, keepdims
        ctx.axes = _normalize_axes(axis, a.ndim)
        return np.asarray(a.sum(axis=ctx.axes, keepdims=keepdims))

    @staticmethod
    def backward(ctx, g):
        g = _expand_reduced(g, ctx.shape, ctx.axes, ctx.keepdims)
        return (np.broadcast_to(g, ctx.shape),)


class Mean(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.shape, ctx.keepdims = a.shape, keepdims
        ctx.axes = _normalize_axes(axis, a.ndim)
        ctx.count = int(np.prod([a.shape[i] for i in ctx.axes])) if a.ndim else 1
        return np.asarray(a.mean(axis=ctx.axes, keepdims=keepdims))

    @staticmethod
    def backward(ctx, g):
        g = _expand_reduced(g, ctx.shape, ctx.axes, ctx.keepdims) / g.dtype.type(ctx.count)
        return (np.broadcast_to(g, ctx.shape),)


class Max(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        axes = _normalize_axes(axis, a.ndim)
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


# --------------------------------------------------------------------------- linear algebra
class MatMul(Function):
    """Batched, broadcasting ``a @ b`` (NumPy semantics, including 1-D operands)."""

    @staticmethod
    def forward(ctx, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError("matmul needs tensors with at least 1 dimension; use * for scalars")
        if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            raise ValueError(f"matmul shape mismatch: {a.shape} @ {b.shape}; the last axis of "
                             f"the left ({a.shape[-1]}) must equal the "
                             f"{'second-to-last' if b.ndim > 1 else 'only'} axis of the right")
        if a.ndim > 2 and b.ndim > 2:
            try:
                np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            except ValueError:
                raise ValueError(f"matmul: batch axes {a.shape[:-2]} and {b.shape[:-2]} of "
                                 f"{a.shape} @ {b.shape} do not broadcast") from None
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        # Promote 1-D operands to matrices so one set of rules covers every case.
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        # Fix (tests/core): expand for b first; for 1-D @ 1-D g is 0-d and
        # expand_dims(g, -2) on a 0-d array raised AxisError.
        if b.ndim == 1:
            g = np.expand_dims(g, -1)
        if a.ndim == 1:
            g = np.expand_dims(g, -2)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = _unbroadcast(g @ np.swapaxes(b2, -1, -2), a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            if b2.ndim == 2 and a2.ndim > 2:
                # Why: a (B, T, k) @ W (k, n) is one big GEMM over B*T rows; summing B
                # small per-batch products would be much slower.
                k = a2.shape[-1]
                gb = a2.reshape(-1, k).T @ g.reshape(-1, g.shape[-1])
            else:
                gb = _unbroadcast(np.swapaxes(a2, -1, -2) @ g, b2.shape)
            gb = gb.reshape(b.shape)
        return ga, gb


class Linear(Function):
    """``x @ W.T (+ b)`` for x (..., in) and W (out, in): the layer behind Linear and the heads.

    Why a primitive of its own: flattening the leading axes turns the whole batch into ONE
    2-D GEMM, and the weight gradient ``g2.T @ x2`` comes out already in W's (out, in) layout,
    C-contiguous, so no transposed copy is made for it. (``x @ W.T`` through MatMul and
    Transpose gives the same numbers with an extra copy of dW.)
    """

    @staticmethod
    def forward(ctx, x, weight, *bias):
        if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
            raise ValueError(f"linear: input of shape {x.shape} needs a last axis of size "
                             f"{weight.shape[1]} for a weight of shape {weight.shape}")
        x2 = x.reshape(-1, x.shape[-1])  # (N, in)
        y = x2 @ weight.T  # (N, out)
        if bias:
            y += bias[0]
        ctx.save_for_backward(x2, weight)
        ctx.x_shape = x.shape
        return y.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, g):
        x2, weight = ctx.saved_tensors
        g2 = g.reshape(-1, weight.shape[0])  # (N, out)
        need = ctx.needs_input_grad
        dx = (g2 @ weight).reshape(ctx.x_shape) if need[0] else None  # (..., in)
        dw = g2.T @ x2 if need[1] else None  # (out, in)
        if len(need) == 2:
            return dx, dw
        return dx, dw, (g2.sum(axis=0) if need[2] else None)


# --------------------------------------------------------------------------- shape
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
        # Fix (tests/core): normalise negative axes first; argsort of e.g. (0, -1, 1) is not
        # the inverse permutation, so backward returned a wrongly transposed gradient.
        axes = tuple(int(x) % max(a.ndim, 1) for x in axes)
        ctx.inverse = tuple(np.argsort(axes))
        return a.transpose(axes)

    @staticmethod
    def backward(ctx, g):
        return (g.transpose(ctx.inverse),)


def _is_advanced(index: Any) -> bool:
    """True when ``index`` uses integer/boolean arrays (NumPy 'advanced' indexing)."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (np.ndarray, list)) for p in parts)


def _plain_index(index: Any) -> Any:
    """Replace Tensors inside an index by their arrays."""
    if isinstance(index, tuple):
        return tuple(_plain_index(p) for p in index)
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, list):
        return np.asarray(index)
    return index


class GetItem(Function):
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
        if _is_advanced(ctx.index):
            np.add.at(grad, ctx.index, g)  # repeated indices must add up, not overwrite
        else:
            grad[ctx.index] = g
        return (grad,)


class Embedding(Function):
    """``W[ids]``: the row gather behind ``nn.Embedding`` (W is (V, d), ids any int shape).

    Backward scatter-adds the rows of ``g`` into a zero (V, d) matrix. A token that appears
    k times receives the sum of its k gradient rows, and rows of absent tokens stay zero: the
    gradient of an embedding is row-sparse. ``dW[ids] += g`` would be wrong (NumPy buffers the
    fancy-indexed write, so repeated ids count once), and 2-D ``np.add.at`` is slow, so we
    scatter into the flattened matrix with flat 1-D indices ``id * d + column``.
    """

    @staticmethod
    def forward(ctx, weight, ids):
        ctx.save_for_backward(ids)
        ctx.weight_shape, ctx.dtype = weight.shape, weight.dtype
        return weight[ids]  # (*ids.shape, d)

    @staticmethod
    def backward(ctx, g):
        (ids,) = ctx.saved_tensors
        vocab, d = ctx.weight_shape
        dW = np.zeros(vocab * d, dtype=ctx.dtype)  # flat (V * d,)
        flat = (ids.reshape(-1, 1) * d + np.arange(d)).reshape(-1)  # (N * d,)
        np.add.at(dW, flat, g.reshape(-1))
        return dW.reshape(vocab, d), None


class Where(Function):
    @staticmethod
    def forward(ctx, a, b, condition):
        ctx.condition, ctx.shapes = condition, (a.shape, b.shape)
        return np.where(condition, a, b)

    @staticmethod
    def backward(ctx, g):
        c = ctx.condition
        sa, sb = ctx.shapes
        return (_unbroadcast(np.where(c, g, 0), sa) if ctx.needs_input_grad[0] else None,
                _unbroadcast(np.where(c, 0, g), sb) if ctx.needs_input_grad[1] else None)


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


# --------------------------------------------------------------------------- helpers
def embedding(weight: Tensor, ids: Any) -> Tensor:
    """Differentiable ``weight[ids]`` for integer ``ids`` (no gradient flows to the ids)."""
    ids_arr = ids.data if isinstance(ids, Tensor) else np.asarray(ids)
    return Embedding.apply(weight, Tensor._wrap(ids_arr))


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """Elementwise ``a`` where ``condition`` is true, else ``b`` (differentiable in a and b)."""
    cond = np.asarray(condition.data if isinstance(condition, Tensor) else condition, dtype=bool)
    a, b = _pair(a, b)
    return Where.apply(a, b, condition=cond)


def masked_fill(x: Tensor, mask: Any, value: float) -> Tensor:
    """``x`` with ``value`` wherever ``mask`` is true (e.g. -inf above the causal diagonal)."""
    return where(mask, Tensor._wrap(np.asarray(value, dtype=x.dtype)), x)


def concatenate(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    tensors = [as_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError("concatenate needs at least one tensor")
    return Concatenate.apply(*tensors, axis=axis)


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
    return Concatenate.apply(*expanded, axis=ax)


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
