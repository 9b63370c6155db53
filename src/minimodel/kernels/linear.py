"""Kernel for ``F.linear``: y = x W^T + b as one 2-D GEMM over all rows."""

from __future__ import annotations

import numpy as np

from minimodel.kernels import buffers
from minimodel.autograd import Function
from minimodel.dispatch import register_kernel
from minimodel.functional.linear import check_linear_inputs
from minimodel.tensor import Tensor


class Linear(Function):
    """``x @ W.T (+ b)`` for x (..., in) and W (out, in).

    Why faster than the composite: flattening the leading axes turns the whole batch into ONE
    2-D GEMM, and the weight gradient ``g2.T @ x2`` comes out already in W's (out, in) layout,
    C-contiguous, so no transposed copy is made for it. Outputs come from
    :mod:`minimodel.kernels.buffers` (memory reused across steps instead of page-faulted afresh).
    """

    @staticmethod
    def forward(ctx, x, weight, *bias):
        x2 = x.reshape(-1, x.shape[-1])  # (N, in)
        y = np.matmul(x2, weight.T, out=buffers.empty((x2.shape[0], weight.shape[0]),
                                                        np.result_type(x2, weight)))  # (N, out)
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
        dx = None
        if need[0]:  # (..., in)
            dx = np.matmul(g2, weight, out=buffers.empty(
                (g2.shape[0], weight.shape[1]), np.result_type(g2, weight))).reshape(ctx.x_shape)
        dw = np.matmul(g2.T, x2, out=buffers.empty(weight.shape, np.result_type(g2, x2))
                       ) if need[1] else None  # (out, in)
        if len(need) == 2:
            return dx, dw
        # The bias gradient sums g over the rows: ones(N) @ g2 runs in BLAS, faster than sum.
        return dx, dw, (np.ones(g2.shape[0], g2.dtype) @ g2 if need[2] else None)


@register_kernel("linear")
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    x = check_linear_inputs(x, weight, bias)
    return Linear.apply(x, weight) if bias is None else Linear.apply(x, weight, bias)
