"""Kernels for ``F.softmax``, ``F.log_softmax`` and ``F.gelu``: in-place temporaries and a
hand-derived backward, so one (..., n) buffer is kept instead of one per primitive."""

from __future__ import annotations

import numpy as np

from minimodel.kernels import buffers
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
    """y = 0.5 x (1 + t), t = tanh(sqrt(2/pi) (x + 0.044715 x^3)); see ``F.gelu``.

    Written around h = 0.5 (1 + t), so that y = x h and, since 1 - t^2 = 4 h (1 - h),

        dy/dx = h + 2 x h (1 - h) sqrt(2/pi) (1 + 3 * 0.044715 x^2),

    with every constant folded into one multiply or add: each line below is one pass over an
    (..., n) buffer (8 forward, 8 backward, against 9 and 12 written term by term).

    h itself comes from 0.5 (1 + tanh u) = sigmoid(2u) = 1 / (1 + exp(-2u)): NumPy's float32
    exp is vectorised (AVX2) where its tanh is not, and takes about half the time
    (BENCHMARKS.md, "Kernel details"). For x below about -10,
    exp(-2u) overflows to inf and h = 1 / inf = 0, the right limit: that warning is silenced.
    """

    @staticmethod
    def forward(ctx, x):
        # (A 0-d input is viewed as 1-d: NumPy turns 0-d results into scalars, which out=
        # cannot write into.)
        ctx.shape = x.shape
        x = x.reshape(-1) if x.ndim == 0 else x
        h = np.multiply(x, x, out=buffers.empty(x.shape, x.dtype))
        h *= -2.0 * GELU_C * GELU_A
        h -= 2.0 * GELU_C
        h *= x  # -2u, u = sqrt(2/pi) (x + 0.044715 x^3)
        with np.errstate(over="ignore"):
            np.exp(h, out=h)
        h += 1.0
        np.reciprocal(h, out=h)  # h = 1 / (1 + exp(-2u)) = 0.5 (1 + tanh u)
        y = np.multiply(x, h, out=buffers.empty(x.shape, x.dtype))
        ctx.save_for_backward(x, h)
        return y.reshape(ctx.shape)

    @staticmethod
    def backward(ctx, g):
        x, h = ctx.saved_tensors
        a = np.multiply(x, x, out=buffers.empty(x.shape, x.dtype))
        a *= 6.0 * GELU_C * GELU_A
        a += 2.0 * GELU_C
        a *= x  # 2 x sqrt(2/pi) (1 + 3 * 0.044715 x^2)
        b = np.subtract(1.0, h, out=buffers.empty(h.shape, h.dtype))
        b *= h  # h (1 - h)
        a *= b
        a += h  # dy/dx
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
