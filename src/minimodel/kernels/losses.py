"""Kernels for ``F.cross_entropy`` and ``F.linear_cross_entropy`` (the head's loss)."""

from __future__ import annotations

from typing import Any

import numpy as np

from minimodel.kernels import buffers
from minimodel.kernels.gradients import hand_over
from minimodel.autograd import Function, is_grad_enabled
from minimodel.dispatch import register_kernel
from minimodel.functional.losses import IGNORE_INDEX, check_head_inputs, flat_class_inputs
from minimodel.tensor import Tensor

CHUNK_BYTES = 16 * 2**20  # linear_cross_entropy: about 16 MiB of logits per chunk
MIN_CHUNK_ROWS = 64
PRODUCT_BLOCK_BYTES = 2**20  # dW += dlogits_c^T h_c: rows of the product made 1 MiB at a time


class CrossEntropy(Function):
    r"""Mean negative log-likelihood of ``targets`` under softmax(``logits``).

    logits (N, V), targets (N,) ints; rows whose target is ``ignore_index`` do not count:

        loss = (1 / |valid|) * sum_{n valid} [ logsumexp(logits_n) - logits_{n, t_n} ]
        dlogits_n = (softmax(logits_n) - onehot(t_n)) / |valid|      (zero for ignored rows)

    Only one (N, V) array is kept for backward: the probabilities, updated in place.
    """

    CHUNK_ROWS = 64  # rows per pass: a (64, V) slice stays in cache for max/exp/sum/divide

    @staticmethod
    def forward(ctx, logits, targets, ignore_index=IGNORE_INDEX):
        n = logits.shape[0]
        valid = targets != ignore_index  # (N,)
        safe_targets = np.where(valid, targets, 0)
        probs = np.empty_like(logits)  # (N, V), the one buffer kept for backward
        nll = np.empty(n, dtype=logits.dtype)  # (N,)
        step = CrossEntropy.CHUNK_ROWS
        for start in range(0, n, step):
            rows, out = logits[start:start + step], probs[start:start + step]
            np.subtract(rows, rows.max(axis=1, keepdims=True), out=out)  # shifted logits
            target_logit = out[np.arange(out.shape[0]), safe_targets[start:start + step]]
            np.exp(out, out=out)
            sums = out.sum(axis=1)
            nll[start:start + step] = np.log(sums) - target_logit
            out /= sums[:, None]  # softmax
        count = int(valid.sum())
        loss = (nll * valid).sum() / max(count, 1)  # nothing to predict: loss 0, no gradient
        ctx.save_for_backward(probs, safe_targets, valid)
        ctx.count = count
        return np.asarray(loss, dtype=logits.dtype)

    @staticmethod
    def backward(ctx, g):
        probs, targets, valid = ctx.saved_tensors
        grad = probs  # reuse the saved buffer: the graph is freed after backward anyway
        grad[np.arange(grad.shape[0]), targets] -= 1
        scale = (g / max(ctx.count, 1)).astype(grad.dtype)
        grad *= (valid * scale)[:, None].astype(grad.dtype)
        return grad, None


class LinearCrossEntropy(Function):
    r"""cross_entropy(h @ W.T, targets) without ever holding the (N, V) logits.

    h (N, d), W (V, d) (an output head, tied or not), targets (N,). The rows are processed in
    chunks of ``chunk_rows``; each chunk's logits (chunk, V) live only inside the loop. Because
    the loss is a scalar, its gradient is known up to the factor g = dL/dloss already during the
    forward pass, so each chunk also adds its share of the gradients

        dlogits_c = (softmax(logits_c) - onehot(t_c)) / |valid|
        dh_c = dlogits_c @ W,        dW += dlogits_c.T @ h_c

    and backward only multiplies the stored dh (N, d) and dW (V, d) by g. Peak memory is one
    chunk of logits instead of about three (N, V) arrays, at the same number of matmuls; dW
    is summed over the chunks block by block (:func:`add_product_by_row_blocks`), never as a
    second (V, d) array.
    When h and W are one tensor (tied inputs) autograd adds the two gradients, as always.
    """

    @staticmethod
    def forward(ctx, h, weight, targets, ignore_index=IGNORE_INDEX, chunk_rows=256,
                leaves=(False, False)):
        n = h.shape[0]
        valid = targets != ignore_index  # (N,)
        safe_targets = np.where(valid, targets, 0)
        count = max(int(valid.sum()), 1)
        want_dh = is_grad_enabled() and ctx.needs_input_grad[0]
        want_dw = is_grad_enabled() and ctx.needs_input_grad[1]
        dh = buffers.empty(h.shape, h.dtype) if want_dh else None  # (N, d)
        dw = np.empty_like(weight) if want_dw else None  # (V, d): the first chunk's product
        # One (chunk, V) buffer for every chunk's logits: with a fresh array per chunk, the
        # next chunk's logits would exist before the previous ones are freed (two at a time).
        # Plain NumPy, not the pool: a pooled buffer would stay reserved through the backward
        # pass, when the (V, d) gradients make the step's memory peak.
        chunk_logits = np.empty((min(chunk_rows, n), weight.shape[0]), np.result_type(h, weight))
        total = 0.0
        for start in range(0, n, chunk_rows):
            stop = min(start + chunk_rows, n)
            h_c, t_c, v_c = h[start:stop], safe_targets[start:stop], valid[start:stop]
            rows = np.arange(stop - start)
            logits = np.matmul(h_c, weight.T, out=chunk_logits[:stop - start])  # (c, V)
            logits -= logits.max(axis=1, keepdims=True)
            target_logit = logits[rows, t_c]  # (c,)
            np.exp(logits, out=logits)
            sums = logits.sum(axis=1)  # (c,)
            total += float(((np.log(sums) - target_logit) * v_c).sum())
            if want_dh or want_dw:
                logits /= sums[:, None]  # softmax
                logits[rows, t_c] -= 1.0
                logits *= (v_c / h.dtype.type(count)).astype(h.dtype)[:, None]  # dlogits_c
                if want_dh:
                    np.matmul(logits, weight, out=dh[start:stop])  # (c, d)
                if want_dw and start == 0:
                    np.matmul(logits.T, h_c, out=dw)  # (V, d), no zero-filling first
                elif want_dw:
                    add_product_by_row_blocks(dw, logits.T, h_c)  # dw += dlogits_c^T h_c
        ctx.save_for_backward(dh, dw)
        ctx.leaves = leaves
        return np.asarray(total / count, dtype=h.dtype)

    @staticmethod
    def backward(ctx, g):
        dh, dw = ctx.saved_tensors
        # Scale in place: these buffers are ours and the graph is freed after backward, so a
        # second (V, d) copy would only raise the peak memory. g is 1 for a plain loss.
        if float(g) != 1.0:
            for grad in (dh, dw):
                if grad is not None:
                    grad *= g.astype(grad.dtype)
        # A leaf's gradient (the head's matrix E) may take the lookup's gradient in place.
        return tuple(hand_over(grad) if grad is not None and leaf else grad
                     for grad, leaf in zip((dh, dw), ctx.leaves)) + (None,)


def add_product_by_row_blocks(out: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """``out += a @ b`` for out (V, d), a (V, c), b (c, d), a block of rows at a time.

    Why: NumPy's matmul cannot add into ``out``; the whole product first would be a second
    (V, d) array (24.5 MiB at V = 50,257, d = 128) next to the gradient it is added to. One
    block of about ``PRODUCT_BLOCK_BYTES`` is reused for every block of rows, and is still in
    cache when it is added.
    """
    rows = max(1, PRODUCT_BLOCK_BYTES // (out.itemsize * out.shape[1]))
    block = np.empty((min(rows, out.shape[0]), out.shape[1]), out.dtype)
    for start in range(0, out.shape[0], rows):
        stop = min(start + rows, out.shape[0])
        out[start:stop] += np.matmul(a[start:stop], b, out=block[:stop - start])


def chunk_rows_for(vocab: int, itemsize: int) -> int:
    """Rows per chunk so that one chunk of logits is about ``CHUNK_BYTES``."""
    return max(MIN_CHUNK_ROWS, CHUNK_BYTES // (itemsize * vocab))


@register_kernel("cross_entropy")
def cross_entropy(logits: Tensor, targets: Any, ignore_index: int = IGNORE_INDEX) -> Tensor:
    logits, t = flat_class_inputs(logits, targets, ignore_index)  # (N, V), (N,)
    return CrossEntropy.apply(logits, Tensor._wrap(t), ignore_index=ignore_index)


@register_kernel("linear_cross_entropy")
def linear_cross_entropy(h: Tensor, weight: Tensor, targets: Any,
                         ignore_index: int = IGNORE_INDEX) -> Tensor:
    h, t = check_head_inputs(h, weight, targets, ignore_index)  # (N, d), (N,)
    rows = chunk_rows_for(weight.shape[0], h.dtype.itemsize)
    leaves = (h._node is None, weight._node is None)  # made by no operation: parameters
    return LinearCrossEntropy.apply(h, weight, Tensor._wrap(t), ignore_index=ignore_index,
                                    chunk_rows=rows, leaves=leaves)
