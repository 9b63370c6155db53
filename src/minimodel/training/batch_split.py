"""One batch's loss and gradients, and data parallelism: the batch in two halves, one per core.

The readable step is two lines::

    loss = model.loss(inputs, targets)     # mean over the batch's labelled targets
    loss.backward()                        # every parameter's .grad += dL/dp

Why it may be split. ``model.loss`` is the mean over the batch's labelled targets (those that
are not ``IGNORE_INDEX``), and the rows of a batch are independent examples. Cut the rows into
parts k, each with n_k labelled targets and mean loss L_k:

    L = (1/n) sum_i l_i = sum_k (n_k / n) L_k,      n = sum_k n_k

and, the gradient being linear, dL/dp = sum_k (n_k / n) dL_k/dp for every parameter p. The
parts share nothing until that sum, so each can run in its own thread: BLAS and NumPy's loops
release Python's GIL, and two threads keep two cores busy. Each part asks
:func:`minimodel.autograd.grad` for its gradients (returned, not stored: the two threads never
write the same ``.grad``); they are then added in part order, so a run gives the same bits
every time. Example: 3 labelled targets with losses 1, 2, 3 -> L = 2; parts {1, 2} and {3}:
(2/3) * 1.5 + (1/3) * 3 = 2.

When. Only with kernels on (``mm.kernels(False)`` / ``MINIMODEL_KERNELS=0`` always runs the two
readable lines), for batches of at least 2 rows and ``PARTS * MIN_TOKENS_PER_PART`` tokens
(smaller ones: the two threads mostly wait for each other), and never while a Dropout draws
random numbers (their order would depend on thread timing).

Why always 2 parts, whatever the machine: the parts' sums round differently from the whole
batch's, so the number of parts is part of a run's arithmetic. Fixing it makes a run's bits
depend on its batch shape only, not on the cores it found: when BLAS may use one thread only
(``minimodel train --threads 1``, a busy machine under ``--threads auto``) the parts run one
after the other in this thread, with the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minimodel.autograd import grad, is_grad_enabled
from minimodel.dispatch import kernels_enabled
from minimodel.labels import IGNORE_INDEX
from minimodel.kernels.threads import run_parts
from minimodel.nn import Dropout, Module

PARTS = 2  # fixed, so that results never depend on the machine (module docstring)
MIN_TOKENS_PER_PART = 768  # smaller batches run whole (timings: BENCHMARKS.md)


def loss_and_backward(model: Module, inputs: Any, targets: Any, *extra: Any) -> float:
    """``model.loss(inputs, targets, *extra)``, back-propagated into every parameter's
    ``.grad``; returns the loss. In two halves, in threads, when :func:`parts_for` says so."""
    if parts_for(model, inputs) < 2 or extra or np.shape(targets)[:1] != np.shape(inputs)[:1]:
        return _whole(model, inputs, targets, *extra)
    try:
        return _in_parts(model, np.asarray(inputs), np.asarray(targets), PARTS)
    except (ValueError, TypeError):
        # Bad input: report it as the whole batch would (the shapes in the message are the
        # batch's). No .grad was touched: the parts' gradients are added only at the end.
        return _whole(model, inputs, targets)


def _whole(model: Module, inputs: Any, targets: Any, *extra: Any) -> float:
    loss = model.loss(inputs, targets, *extra)
    loss.backward()
    return float(loss.data)


def parts_for(model: Module, inputs: Any) -> int:
    """How many parts a batch is cut into (1: whole). Depends on the batch's shape and the
    model's mode, never on the machine."""
    shape = np.shape(inputs)
    if (not kernels_enabled() or not is_grad_enabled() or not shape or shape[0] < PARTS
            or int(np.prod(shape)) < PARTS * MIN_TOKENS_PER_PART or _draws_random_numbers(model)):
        return 1
    return PARTS


def _draws_random_numbers(model: Module) -> bool:
    """True when a forward pass draws random numbers now: a Dropout with p > 0 in training."""
    return model.training and any(isinstance(m, Dropout) and m.p > 0 for m in model.modules())


def _in_parts(model: Module, inputs: np.ndarray, targets: np.ndarray, parts: int) -> float:
    cuts = [round(k * inputs.shape[0] / parts) for k in range(parts + 1)]
    bounds = list(zip(cuts[:-1], cuts[1:]))  # contiguous rows: 16 rows in 3 -> 0-5, 5-11, 11-16
    counts = [int(np.count_nonzero(targets[a:b] != IGNORE_INDEX)) for a, b in bounds]
    weights = [n / sum(counts) if sum(counts) else 0.0 for n in counts]  # n_k / n
    params = [p for p in model.parameters() if p.requires_grad]

    def part(a: int, b: int, weight: float) -> tuple[float, list[np.ndarray]]:
        loss = model.loss(inputs[a:b], targets[a:b])  # L_k
        if not params:
            return float(loss.data), []
        weighted = np.asarray(weight, loss.dtype)
        return float(loss.data), grad(loss, params, weighted, materialize_grads=False)  # w_k dL_k/dp

    results = run_parts([lambda a=a, b=b, w=w: part(a, b, w) for (a, b), w in zip(bounds, weights)])
    for i, p in enumerate(params):  # dL/dp = sum_k w_k dL_k/dp, in part order
        reached = [grads[i] for _, grads in results if grads[i] is not None]
        if not reached:  # the loss does not depend on p: its .grad stays as it was
            continue
        total = reached[0]
        for g in reached[1:]:
            total += g
        p.grad = total if p.grad is None else p.grad + total
    return float(sum(w * loss for w, (loss, _) in zip(weights, results)))
