"""Matrix product: the one primitive that does almost all of a model's arithmetic."""

from __future__ import annotations

import numpy as np

from minimodel.autograd import Function, unbroadcast


class MatMul(Function):
    r"""Batched, broadcasting ``a @ b`` (NumPy semantics, including 1-D operands).

    For C = A B:  dA = g B^T  and  dB = A^T g  (summed over broadcast batch axes).
    """

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
        if b.ndim == 1:  # expand for b first: for 1-D @ 1-D, g is 0-d
            g = np.expand_dims(g, -1)
        if a.ndim == 1:
            g = np.expand_dims(g, -2)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = unbroadcast(g @ np.swapaxes(b2, -1, -2), a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            if b2.ndim == 2 and a2.ndim > 2:
                # Why: a (B, T, k) @ W (k, n) is one big GEMM over B*T rows; summing B
                # small per-batch products would be much slower.
                k = a2.shape[-1]
                gb = a2.reshape(-1, k).T @ g.reshape(-1, g.shape[-1])
            else:
                gb = unbroadcast(np.swapaxes(a2, -1, -2) @ g, b2.shape)
            gb = gb.reshape(b.shape)
        return ga, gb
