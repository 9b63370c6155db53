"""Kernel for ``F.batch_loss``: the parts of a batch in threads, one per core (data parallelism).

Why threads pay in NumPy. BLAS and NumPy's array loops release Python's GIL, so two threads,
each running the forward and backward of half the batch, keep two cores busy. The
alternative, one thread with OpenBLAS splitting every matrix product over the cores, pays a
wake-up and a join per product, and a step makes hundreds of small ones (per-head attention,
d = 128 projections); the elementwise work (GELU, LayerNorm, softmax) runs on one core only.
Measured on 2 cores (``minimodel bench``, B=16, T=128, 4 layers): the training step takes
~0.8x (d=128) and ~0.9x (d=256) of the one-thread-plus-BLAS-threads time.

How, for P = 2 parts:

1. forward: rows [0, B) are cut into P contiguous parts; each runs ``loss_fn`` in its own
   thread and records its own graph, while BLAS gets its threads shared out between the
   parts (one each on 2 cores; restored afterwards: the library makes no lasting change to
   process settings). The threads come from :func:`minimodel.threads.run_parts`.
2. join: ``L = sum_k w_k L_k`` with ``w_k = n_k / n`` (labelled targets per part, see
   ``F.batch_loss``), as one autograd node whose inputs are the leaves (parameters) the
   parts reached, so the engine hands this node their gradient like any other.
3. backward: each part's graph is walked in its own thread from ``w_k * dL``, storing leaf
   gradients in a dict of its own (``autograd.backward(..., leaf_grads=...)``) instead of
   racing on ``.grad``; they are then summed in part order, so a run gives the same bits
   every time.

Why always 2 parts, whatever the machine: the parts' sums round differently from the whole
batch's, so the number of parts is part of a run's arithmetic. Fixing it makes a run's bits
depend on its batch shape only, not on the cores it found or the load at the start: when
BLAS may use one thread only (``minimodel train --threads 1``, a busy machine under
``--threads auto``, or no BLAS library threadpoolctl can limit) the parts run one after the
other in this thread, same numbers, ~2 % slower than one whole batch.

The composite (the whole batch at once) runs instead when gradients are off, the batch has
fewer than 2 rows or ``2 * MIN_TOKENS_PER_PART`` tokens (too small for threads to pay),
``splittable`` is False (dropout: random draws must not depend on thread timing), inside a
part already, or when the parts' graphs share an intermediate tensor (an input that is
itself computed).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minimodel import autograd, workspace
from minimodel.autograd import Function, _topological_order, is_grad_enabled
from minimodel.dispatch import composites, register_kernel
from minimodel.functional.losses import IGNORE_INDEX
from minimodel.tensor import Tensor
from minimodel.threads import inside_part, run_parts

PARTS = 2  # fixed, so that results never depend on the machine (module docstring)
# Smaller batches run whole. Measured (GPT step, 4 layers, 2 cores; parts / whole batch):
# 4096 tokens 0.62 (d=64); 2048 tokens 0.79 (d=128), 0.87 (d=64), 0.89 (d=32); 1536 tokens
# 0.87-0.94; 1024 tokens 1.05 (d=128), 0.95 (d=256); 512 tokens 1.06-1.32. Under ~1500 tokens
# the two threads mostly wait for each other (Python's GIL, BLAS calls too small to share).
MIN_TOKENS_PER_PART = 768

# --------------------------------------------------------------------------- the join
class JoinParts(Function):
    """``L = sum_k w_k L_k`` over the parts' losses; its inputs are the leaves they reached.

    Backward walks every part's graph in its own thread and returns, for each leaf,
    ``sum_k (dL/dL_k) dL_k/dleaf`` with ``dL/dL_k = w_k * grad_out``.
    """

    @staticmethod
    def forward(ctx, *leaf_arrays, losses, weights, leaf_ids):
        ctx.losses, ctx.weights, ctx.leaf_ids = losses, weights, leaf_ids
        return _weighted_sum(weights, losses)

    @staticmethod
    def backward(ctx, grad_out):
        def part_gradients(loss: Tensor, weight: float) -> dict[int, tuple[Tensor, np.ndarray]]:
            found: dict[int, tuple[Tensor, np.ndarray]] = {}
            autograd.backward(loss, np.asarray(weight * grad_out, loss.dtype), leaf_grads=found)
            return found

        parts = run_parts([lambda loss=loss, w=w: part_gradients(loss, w)
                           for loss, w in zip(ctx.losses, ctx.weights)])
        ctx.losses = ()  # the parts' graphs are consumed
        return tuple(_sum_in_order([part[i][1] for part in parts if i in part])
                     for i in ctx.leaf_ids)


def _weighted_sum(weights: list[float], losses: list[Tensor]) -> np.ndarray:
    """sum_k w_k L_k as a 0-d array of the losses' dtype."""
    return np.asarray(sum(w * float(loss.data) for w, loss in zip(weights, losses)),
                      losses[0].dtype)


def _sum_in_order(grads: list[np.ndarray]) -> np.ndarray | None:
    """g_0 + g_1 + ... in a new array (always fresh, so the leaf may keep it as its .grad)."""
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0].copy()
    total = np.add(grads[0], grads[1],
                   out=workspace.empty(grads[0].shape, np.result_type(grads[0], grads[1])))
    for g in grads[2:]:
        total += g
    return total


def _leaves_of(losses: list[Tensor]) -> list[Tensor] | None:
    """The leaves reached from every part's loss, in first-seen order; None when two parts
    share an interior node (their backward walks would then race on it)."""
    leaves: dict[int, Tensor] = {}
    interior: set[int] = set()
    for loss in losses:
        if not loss.requires_grad:
            continue
        mine: set[int] = set()
        for node in _topological_order(loss):
            if node._node is None:
                leaves.setdefault(id(node), node)
            else:
                mine.add(id(node))
        if mine & interior:
            return None
        interior |= mine
    return list(leaves.values())


# --------------------------------------------------------------------------- the kernel
def _part_bounds(rows: int, parts: int) -> list[tuple[int, int]]:
    """Contiguous row ranges of near-equal size: 16 rows in 3 parts -> 0-5, 5-11, 11-16."""
    cuts = [round(k * rows / parts) for k in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def _labelled(targets: Any) -> int:
    t = targets.data if isinstance(targets, Tensor) else np.asarray(targets)
    return int(np.count_nonzero(t != IGNORE_INDEX))


def parts_for(inputs: Any, splittable: bool) -> int:
    """How many parts ``batch_loss`` cuts this batch into (1: the composite runs). Depends on
    the batch's shape, never on the machine."""
    shape = getattr(inputs, "shape", None)
    if (not splittable or inside_part() or not is_grad_enabled() or not shape
            or shape[0] < PARTS or int(np.prod(shape)) < PARTS * MIN_TOKENS_PER_PART):
        return 1
    return PARTS


@register_kernel("batch_loss")
def batch_loss(loss_fn: Callable[[Any, Any], tuple[Tensor, Any]], inputs: Any, targets: Any,
               splittable: bool = True) -> tuple[Tensor, list[Any]]:
    """``F.batch_loss`` as ``PARTS`` parts in threads, one per core (see the module docstring)."""
    parts = parts_for(inputs, splittable)
    if parts < 2:
        return composites()["batch_loss"](loss_fn, inputs, targets, splittable)
    return split_batch_loss(loss_fn, inputs, targets, parts)


def split_batch_loss(loss_fn: Callable[[Any, Any], tuple[Tensor, Any]], inputs: Any,
                     targets: Any, parts: int) -> tuple[Tensor, list[Any]]:
    """The batch in ``parts`` row ranges, each in its own thread, joined into one loss."""
    composite = composites()["batch_loss"]
    inputs = inputs if isinstance(inputs, Tensor) else np.asarray(inputs)
    targets = targets if isinstance(targets, Tensor) else np.asarray(targets)
    if getattr(targets, "shape", ())[:1] != inputs.shape[:1]:
        return composite(loss_fn, inputs, targets)  # let the model report the mismatch
    bounds = _part_bounds(inputs.shape[0], parts)
    try:
        results = run_parts([lambda a=a, b=b: loss_fn(inputs[a:b], targets[a:b])
                             for a, b in bounds])
    except (ValueError, TypeError):
        # Bad input: report it as the whole batch would (shapes in the message are the batch's).
        return composite(loss_fn, inputs, targets)
    losses = [loss for loss, _ in results]
    extras = [extra for _, extra in results]
    counts = [_labelled(targets[a:b]) for a, b in bounds]
    total = sum(counts)
    weights = [n / total if total else 0.0 for n in counts]
    leaves = _leaves_of(losses)
    if leaves is None:
        return composite(loss_fn, inputs, targets)
    if not leaves:  # nothing to differentiate (everything frozen, say): just the value
        return Tensor(_weighted_sum(weights, losses)), extras
    loss = JoinParts.apply(*leaves, losses=losses, weights=weights,
                           leaf_ids=[id(leaf) for leaf in leaves])
    return loss, extras
