"""Elementwise primitives: arithmetic with NumPy broadcasting, and the unary functions.

A binary op broadcasts its inputs like NumPy; its backward sums each gradient back to its
input's shape with :func:`minimodel.autograd.unbroadcast`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from minimodel.autograd import Context, Function, unbroadcast
from minimodel.dispatch import replaceable

if TYPE_CHECKING:  # pragma: no cover
    from minimodel.tensor import Tensor


def check_broadcast(a: np.ndarray, b: np.ndarray, op: str) -> tuple[int, ...]:
    """The shape of ``a op b``; refuses shapes that do not broadcast, in our words rather than
    NumPy's."""
    if a.shape == b.shape:
        return a.shape
    try:
        return np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} do not broadcast (each axis, "
                         "aligned from the right, must be equal or 1)") from None


class Add(Function):
    @staticmethod
    def forward(ctx: Context, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        check_broadcast(a, b, "add")
        ctx.shapes = (a.shape, b.shape)
        return a + b

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return (unbroadcast(g, sa) if ctx.needs_input_grad[0] else None,
                unbroadcast(g, sb) if ctx.needs_input_grad[1] else None)


@replaceable
def add(a: "Tensor", b: "Tensor") -> "Tensor":
    """``a + b`` for two tensors (what ``Tensor.__add__`` runs): the :class:`Add` primitive,
    whose backward hands the upstream gradient g to both inputs (summed over any broadcast
    axes): dL/da = g, dL/db = g.

    Why the one primitive behind a replaceable name: its output is the largest array made
    outside the other kernels, the (B, T, d) residual stream (``x = x + attn(ln(x))``), made
    twice per block and kept for backward; a kernel may write the same sum into memory reused
    from the previous step instead of fresh memory (see :mod:`minimodel.dispatch`).
    """
    return Add.apply(a, b)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        check_broadcast(a, b, "sub")
        ctx.shapes = (a.shape, b.shape)
        return a - b

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return (unbroadcast(g, sa) if ctx.needs_input_grad[0] else None,
                unbroadcast(-g, sb) if ctx.needs_input_grad[1] else None)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        check_broadcast(a, b, "mul")
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (unbroadcast(g * b, a.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(g * a, b.shape) if ctx.needs_input_grad[1] else None)


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        check_broadcast(a, b, "div")
        out = a / b
        ctx.save_for_backward(b, out)
        ctx.a_shape = a.shape
        return out

    @staticmethod
    def backward(ctx, g):
        b, out = ctx.saved_tensors
        ga = g / b  # d(a/b)/da = 1/b;  d(a/b)/db = -a/b^2 = -(1/b) * out
        return (unbroadcast(ga, ctx.a_shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-ga * out, b.shape) if ctx.needs_input_grad[1] else None)


class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, g):
        return (-g,)


class Pow(Function):
    """a ** p for a constant exponent p (a number, not a tensor)."""

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
