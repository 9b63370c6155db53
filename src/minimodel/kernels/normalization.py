"""Kernel for ``F.layer_norm``: one pass for the statistics, a hand-derived backward."""

from __future__ import annotations

import numpy as np

from minimodel.kernels import buffers
from minimodel.autograd import Function
from minimodel.dispatch import register_kernel
from minimodel.functional.normalization import check_layer_norm_inputs
from minimodel.tensor import Tensor


def last_axis_sums(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=-1, keepdims=True)`` as one matrix-vector product: (..., d) -> (..., 1).

    Why: NumPy reduces a short last axis (d = 128) one row at a time, several times slower
    than the single BLAS GEMV ``a @ ones(d)`` (timings: BENCHMARKS.md, "Kernel details").
    """
    return (a @ np.ones(a.shape[-1], a.dtype))[..., None]


def leading_axes_sums(a: np.ndarray) -> np.ndarray:
    """``a.reshape(-1, d).sum(axis=0)`` as ``ones(N) @ a2``: (..., d) -> (d,), via BLAS."""
    a2 = a.reshape(-1, a.shape[-1])
    return np.ones(a2.shape[0], a.dtype) @ a2


class LayerNorm(Function):
    r"""y = x_hat * weight + bias with x_hat = (x - mean) / sqrt(var + eps) over the last axis.

    With r = 1 / sqrt(var + eps) and gh = g * weight:

        dx      = r * (gh - mean(gh) - x_hat * mean(gh * x_hat))
        dweight = sum over rows of g * x_hat,   dbias = sum over rows of g

    Inputs are (x, weight, bias); the wrapper passes constants for a missing weight or bias.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        d = x.shape[-1]
        mean = last_axis_sums(x)
        mean *= 1.0 / d
        x_hat = np.subtract(x, mean, out=buffers.empty(x.shape, x.dtype))  # (..., d), centred
        tmp = np.multiply(x_hat, x_hat, out=buffers.empty(x.shape, x.dtype))
        var = last_axis_sums(tmp)
        var *= 1.0 / d  # population variance
        var += eps
        rstd = 1.0 / np.sqrt(var)  # (..., 1)
        x_hat *= rstd
        # Saved: x (the graph keeps it anyway), the statistics and the weight; x_hat is
        # recomputed in backward rather than kept, one (..., d) array less until then.
        ctx.save_for_backward(x, mean, rstd, weight)
        np.multiply(x_hat, weight, out=tmp)  # reuse the buffer: y = x_hat * weight + bias
        tmp += bias
        return tmp

    @staticmethod
    def backward(ctx, g):
        x, mean, rstd, weight = ctx.saved_tensors
        x_hat = np.subtract(x, mean, out=buffers.empty(x.shape, x.dtype))
        x_hat *= rstd
        need = ctx.needs_input_grad
        d = x_hat.shape[-1]
        dx = np.multiply(g, weight, out=buffers.empty(g.shape, np.result_type(g, weight)))
        tmp = np.multiply(dx, x_hat, out=buffers.empty(dx.shape, dx.dtype))
        mean_dxhat_xhat = last_axis_sums(tmp)
        mean_dxhat_xhat *= 1.0 / d
        mean_dxhat = last_axis_sums(dx)
        mean_dxhat *= 1.0 / d
        dx -= mean_dxhat
        np.multiply(x_hat, mean_dxhat_xhat, out=tmp)
        dx -= tmp
        dx *= rstd
        dweight = dbias = None
        if need[1]:
            np.multiply(g, x_hat, out=tmp)
            dweight = leading_axes_sums(tmp)
        if need[2]:
            dbias = leading_axes_sums(g)
        return (dx if need[0] else None), dweight, dbias


@register_kernel("layer_norm")
def layer_norm(x: Tensor, eps: float = 1e-5, weight: Tensor | None = None,
               bias: Tensor | None = None) -> Tensor:
    x = check_layer_norm_inputs(x, weight, bias)
    d = x.shape[-1]
    weight = weight if weight is not None else Tensor._wrap(np.ones(d, dtype=x.dtype))
    bias = bias if bias is not None else Tensor._wrap(np.zeros(d, dtype=x.dtype))
    return LayerNorm.apply(x, weight, bias, eps=eps)
