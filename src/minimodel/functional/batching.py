"""The loss of a batch, as the sum of the losses of its parts (what data parallelism rests on)."""

from __future__ import annotations

from typing import Any, Callable

from minimodel.dispatch import replaceable
from minimodel.functional.tensors import concatenate
from minimodel.tensor import Tensor

LossFn = Callable[[Any, Any], "tuple[Tensor, Any]"]


@replaceable
def batch_loss(loss_fn: LossFn, inputs: Any, targets: Any, splittable: bool = True
               ) -> tuple[Tensor, list[Any]]:
    r"""A batch's mean loss: ``loss_fn(inputs, targets) -> (loss, extra)``; returns
    ``(loss, [extra])``.

    ``loss`` must be the mean over the batch's *labelled* targets (those that are not
    ``IGNORE_INDEX``), and rows of ``inputs`` and ``targets`` (axis 0) must be independent
    examples. Then the loss splits over any partition of the rows into parts k, each with n_k
    labelled targets and mean loss L_k:

        L = (1/n) sum_i l_i = sum_k (n_k / n) L_k,      n = sum_k n_k

    and, the gradient being linear, dL/dW = sum_k (n_k / n) dL_k/dW for every parameter W.
    Nothing is shared between the parts until that final sum, so they can be computed at the
    same time, which is data parallelism. This composite computes the batch in one part: the
    whole of it. Its kernel (:mod:`minimodel.kernels.batch_parallel`) runs two halves in
    two threads, one per core. ``extra`` is whatever else ``loss_fn`` returns (a model's hidden states, say);
    the list has one per part, in row order, so ``concatenate(extras)`` is the whole batch's.
    ``splittable=False`` says the parts may not run apart (``loss_fn`` draws random numbers,
    as dropout does, and their order must not depend on thread timing); the composite ignores
    it.

    Example: 3 labelled targets with losses 1, 2, 3 -> L = 2. Parts {1, 2} and {3}:
    (2/3) * 1.5 + (1/3) * 3 = 2.
    """
    loss, extra = loss_fn(inputs, targets)
    return loss, [extra]


def join_parts(parts: list[Tensor]) -> Tensor:
    """The whole batch's tensor from its parts' (``batch_loss`` extras), joined on axis 0; a
    single part is returned as it is (no copy)."""
    return parts[0] if len(parts) == 1 else concatenate(parts, axis=0)
