"""Kernel for ``F.batch_loss``: a model's loss over a batch as two halves, one per core.

What it computes is the definition's (``functional/losses.py``): a model's mean loss over the
batch's labelled targets, where the rows are independent examples, so

    L = sum_k w_k L_k,      dL/dp = sum_k w_k dL_k/dp,      w_k = n_k / n

with n_k the labelled targets of part k. Forward: the two halves of the rows run the model's
loss at the same time in two threads (:mod:`minimodel.kernels.threads`: BLAS and NumPy's loops
release Python's GIL, and each half's BLAS calls get one of the cores), and one graph node
joins them. Backward: each half's graph is walked in its own thread
(:func:`minimodel.autograd.grad`, returned, not stored), and the halves' gradients are added in
part order into the node's input gradients, so a run gives the same bits every time. The node's
inputs are the leaves the halves reached (the model's parameters), and autograd stores their
gradients as for any node: a learner's ``loss.backward()`` gets the split too.

Why split the batch instead of each operation: one thread per half keeps each core on one long
stream of work (a whole forward or backward pass), where splitting every operation would hand
work over between threads hundreds of times a step and leave the small products of attention
on one core. Timings: BENCHMARKS.md ("Kernel details").

When. For batches of at least 2 rows and ``PARTS * MIN_TOKENS_PER_PART`` targets (smaller
ones: the two threads mostly wait for each other), with gradients on, when ``loss_of`` is a
method of a model (a :class:`~minimodel.nn.Module`) none of whose Dropouts draws random numbers
now (their order would depend on thread timing). Otherwise the definition runs as written.

Why always 2 parts, whatever the machine: the parts' sums round differently from the whole
batch's, so the number of parts is part of a run's arithmetic. Fixing it makes a run's bits
depend on its batch shape only, not on the cores it found: when BLAS may use one thread only
(``minimodel train --threads 1``, a busy machine under ``--threads auto``) the parts run one
after the other in this thread, with the same numbers.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minimodel.autograd import Function, grad, is_grad_enabled
from minimodel.dispatch import register_kernel
from minimodel.functional.losses import batch_loss as _definition  # noqa: F401 (registered first)
from minimodel.kernels.threads import run_parts
from minimodel.labels import IGNORE_INDEX
from minimodel.nn import Dropout, Module
from minimodel.tensor import Tensor

PARTS = 2  # fixed, so that results never depend on the machine (module docstring)
MIN_TOKENS_PER_PART = 768  # smaller batches run whole (timings: BENCHMARKS.md)


class JoinedParts(Function):
    r"""L = sum_k w_k L_k of parts computed already; backward: dL/dp = sum_k w_k g dL_k/dp,
    each part's graph walked in its own thread.

    The inputs are the leaves the parts reached (their arrays are not read: the parts' losses
    already hold them in their graphs); ``parts`` are the parts' loss Tensors.
    """

    @staticmethod
    def forward(ctx, *leaf_arrays, leaves, parts, weights):
        ctx.leaves, ctx.parts, ctx.weights = leaves, parts, weights
        total = sum(w * float(loss.data) for w, loss in zip(weights, parts))
        return np.asarray(total, dtype=parts[0].dtype)

    @staticmethod
    def backward(ctx, g):
        leaves = ctx.leaves

        def part_grads(loss: Tensor, weight: float) -> list[np.ndarray | None]:
            upstream = np.asarray(weight * g, dtype=loss.dtype)  # w_k g
            return grad(loss, leaves, upstream, materialize_grads=False)

        results = run_parts([lambda loss=loss, w=w: part_grads(loss, w)
                             for loss, w in zip(ctx.parts, ctx.weights)])
        ctx.parts = None  # the parts' graphs are consumed: let them go now
        sums = []
        for i in range(len(leaves)):  # in part order: the same bits every run
            reached = [grads[i] for grads in results if grads[i] is not None]
            total = reached[0] if reached else None
            for other in reached[1:]:
                total += other  # our own array: grad() returned it to us
            sums.append(total)
        return tuple(sums)


def parts_for(loss_of: Callable[..., Any], inputs: Any) -> int:
    """How many parts a batch is cut into (1: whole). Depends on the batch's shape and the
    model's mode, never on the machine."""
    model = getattr(loss_of, "__self__", None)
    shape = np.shape(inputs.data if isinstance(inputs, Tensor) else inputs)
    if (not isinstance(model, Module) or not is_grad_enabled() or not shape
            or shape[0] < PARTS or int(np.prod(shape)) < PARTS * MIN_TOKENS_PER_PART
            or _draws_random_numbers(model)):
        return 1
    return PARTS


def _draws_random_numbers(model: Module) -> bool:
    """True when a forward pass draws random numbers now: a Dropout with p > 0 in training."""
    return model.training and any(isinstance(m, Dropout) and m.p > 0 for m in model.modules())


def _leaves(roots: list[Tensor]) -> list[Tensor]:
    """The tensors that need gradients and were made by no operation (parameters), reached
    from ``roots``, each once."""
    found, seen, stack = [], set(), list(roots)
    while stack:
        t = stack.pop()
        if id(t) in seen or not t.requires_grad:
            continue
        seen.add(id(t))
        if t._node is None:
            found.append(t)
        else:
            stack.extend(t._node[2])
    return found


@register_kernel("batch_loss")
def batch_loss(loss_of: Callable[[Any, Any], Tensor], inputs: Any, targets: Any) -> Tensor:
    if parts_for(loss_of, inputs) < 2:
        return loss_of(inputs, targets)
    ids = inputs.data if isinstance(inputs, Tensor) else np.asarray(inputs)
    labels = targets.data if isinstance(targets, Tensor) else np.asarray(targets)
    if labels.shape[:1] != ids.shape[:1]:
        return loss_of(inputs, targets)  # not one target row per input row: the definition
    cuts = [round(k * ids.shape[0] / PARTS) for k in range(PARTS + 1)]
    bounds = list(zip(cuts[:-1], cuts[1:]))  # contiguous rows: 16 rows in 2 -> 0-8, 8-16
    counts = [int(np.count_nonzero(labels[a:b] != IGNORE_INDEX)) for a, b in bounds]
    weights = [n / sum(counts) if sum(counts) else 0.0 for n in counts]  # n_k / n
    try:
        parts = run_parts([lambda a=a, b=b: loss_of(ids[a:b], labels[a:b]) for a, b in bounds])
    except (ValueError, TypeError):
        # Bad input: report it as the whole batch would (the shapes in the message are the
        # batch's, not a half's).
        return loss_of(inputs, targets)
    leaves = _leaves(parts)
    if not leaves:  # nothing to differentiate (every parameter frozen): just the number
        return Tensor(JoinedParts.forward(_NoContext(), leaves=[], parts=parts, weights=weights))
    return JoinedParts.apply(*leaves, leaves=leaves, parts=parts, weights=weights)


class _NoContext:
    """A throw-away context for a forward that records no graph node."""
