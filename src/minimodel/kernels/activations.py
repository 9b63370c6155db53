"""Kernels for ``F.softmax``, ``F.log_softmax`` and ``F.gelu``: in-place temporaries and a
hand-derived backward, so one (..., n) buffer is kept instead of one per primitive."""

from __future__ import annotations

import numpy as np

from minimodel import workspace
from minimodel.autograd import Function
from minimodel.dispatch import register_kernel
from minimodel.functional.activations import GELU_A, GELU_C
from minimodel.tensor import Tensor, as_tensor


class Softmax(Function):
    """y = exp(x - m) / sum exp(x - m);  dx = y * (g - sum_j g_j y_j)."""

    @staticmethod
    def forward(ctx, x, axis=-1):
        y = x - x.max(axis=axis, keepdims=True)
        np.exp(y, out=y)
        y /= y.sum(axis=axis, keepdims=True)
        ctx.save_for_backward(y)
        ctx.axis = axis
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return (y * (g - (g * y).sum(axis=ctx.axis, keepdims=True)),)


class LogSoftmax(Function):
    """out = x - m - log sum exp(x - m);  dx = g - softmax(x) * sum_j g_j."""

    @staticmethod
    def forward(ctx, x, axis=-1):
        shifted = x - x.max(axis=axis, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
        ctx.save_for_backward(out)
        ctx.axis = axis
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return (g - np.exp(out) * g.sum(axis=ctx.axis, keepdims=True),)


class GELU(Function):
    """y = 0.5 x (1 + t), t = tanh(sqrt(2/pi) (x + 0.044715 x^3)); see ``F.gelu``."""

    @staticmethod
    def forward(ctx, x):
        # In-place temporaries: two (..., n) buffers instead of one per arithmetic step.
        # (A 0-d input is viewed as 1-d: NumPy turns 0-d results into scalars, which out=
        # cannot write into.)
        ctx.shape = x.shape
        x = x.reshape(-1) if x.ndim == 0 else x
        t = np.multiply(x, x, out=workspace.empty(x.shape, x.dtype))
        t *= GELU_A
        t += 1.0
        t *= x
        t *= GELU_C
        np.tanh(t, out=t)  # t = tanh(sqrt(2/pi) (x + 0.044715 x^3))
        y = np.add(t, 1.0, out=workspace.empty(x.shape, x.dtype))
        y *= x
        y *= 0.5
        ctx.save_for_backward(x, t)
        return y.reshape(ctx.shape)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        a = np.multiply(x, x, out=workspace.empty(x.shape, x.dtype))
        a *= 3.0 * GELU_A
        a += 1.0
        a *= x
        a *= 0.5 * GELU_C  # 0.5 x sqrt(2/pi) (1 + 3 * 0.044715 x^2)
        b = np.multiply(t, t, out=workspace.empty(t.shape, t.dtype))
        np.subtract(1.0, b, out=b)  # 1 - t^2
        a *= b
        np.multiply(t, 0.5, out=b)
        a += b
        a += 0.5  # + 0.5 (1 + t)
        a *= g.reshape(a.shape)
        return (a.reshape(ctx.shape),)


@register_kernel("softmax")
def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return Softmax.apply(as_tensor(x), axis=axis)


@register_kernel("log_softmax")
def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return LogSoftmax.apply(as_tensor(x), axis=axis)


@register_kernel("gelu")
def gelu(x: Tensor) -> Tensor:
    return GELU.apply(as_tensor(x))
