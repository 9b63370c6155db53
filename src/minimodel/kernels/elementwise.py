"""Kernel for ``ops.add`` (``a + b`` of two tensors): the same sum, written into reused memory.

Why: the residual stream ``x = x + attn(ln(x))`` is a (B, T, d) array made twice per block,
plus once for token + position embeddings, and kept until backward. Made with plain NumPy,
they were the largest arrays of a step outside this package's buffers, and the memory they
got was memory malloc had handed back to the operating system when the previous step freed
it, so every step page-faulted on it afresh (counts in BENCHMARKS.md). Backward is ``Add``'s
own: only where the output lives changes, not a single bit of it.
"""

from __future__ import annotations

import numpy as np

from minimodel.dispatch import register_kernel
from minimodel.kernels import buffers
from minimodel.ops.elementwise import Add, check_broadcast
from minimodel.tensor import Tensor


class AddIntoBuffer(Add):
    """``a + b`` into :func:`buffers.empty` memory; backward inherited from :class:`Add`."""

    @staticmethod
    def forward(ctx, a, b):
        shape = check_broadcast(a, b, "add")  # (B, T, d) for the residual stream
        ctx.shapes = (a.shape, b.shape)
        return np.add(a, b, out=buffers.empty(shape, np.result_type(a, b)))


@register_kernel("add")
def add(a: Tensor, b: Tensor) -> Tensor:
    return AddIntoBuffer.apply(a, b)
