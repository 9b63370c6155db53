"""Kernel for ``optim.adamw``: the same update, fused in place and run in two threads.

AdamW is elementwise, so a parameter can be updated piece by piece, and two threads can update
two halves at once (NumPy's loops release the GIL). Elementwise float arithmetic gives the same
bits whatever the cut, so the threads change the time only, never a result. Two more savings
over the definition: the bias corrections are moved out of the elementwise work

    lr * m_hat / (sqrt(v_hat) + eps)  =  step_size * m / (sqrt(v) + eps_hat),
    step_size = lr sqrt(1 - b2^t) / (1 - b1^t),   eps_hat = eps sqrt(1 - b2^t)

and every temporary is written into one scratch buffer per piece, so an update allocates
nothing new (the scratch comes from :mod:`minimodel.kernels.buffers`). Timings: BENCHMARKS.md.
"""

from __future__ import annotations

import math

import numpy as np

from minimodel.dispatch import register_kernel
from minimodel.kernels import buffers
from minimodel.kernels.threads import run_parts
from minimodel.optim import adamw as _composite  # noqa: F401  (registered before its kernel)

PIECE = 131072  # elements per update call: smaller pays more Python overhead per element
SPLIT_ABOVE = 32768  # larger parameters are halved between the threads; smaller go whole


def plan_threads(updates: list[tuple[np.ndarray, ...]]) -> list[list[tuple[int, slice]]]:
    """Which flat element ranges of which update (by index) each of two threads runs.

    ``updates[i]`` holds the arrays of one parameter's update, the parameter first. A large
    parameter is halved, one half per thread, each cut into runs of at most ``PIECE`` (when
    all its arrays are C-contiguous: a flat view must write into them, not into a copy); any
    other goes whole to the thread with less work so far. The same array listed twice (which
    ``Optimizer`` refuses, but a learner's patch might allow) gets the same ranges in the
    same thread, so it is updated twice in order, never by two threads at once.
    """
    plan: list[list[tuple[int, slice]]] = [[], []]
    load = [0, 0]
    thread_of: dict[int, int] = {}  # id of a parameter updated whole -> its thread
    for i, arrays in enumerate(updates):
        p, n = arrays[0], arrays[0].size
        if n > SPLIT_ABOVE and all(a.flags.c_contiguous for a in arrays):
            for thread, (lo, hi) in enumerate(((0, n // 2), (n // 2, n))):
                plan[thread] += [(i, slice(a, min(a + PIECE, hi))) for a in range(lo, hi, PIECE)]
                load[thread] += hi - lo
        else:
            thread = thread_of.setdefault(id(p), load.index(min(load)))
            plan[thread].append((i, slice(0, n)))
            load[thread] += n
    return plan


def adamw_update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, decay: float,
                 b1: float, b2: float, eps_hat: float, step_size: float) -> None:
    """One AdamW update of arrays of one shape (a parameter or a piece of it), in place:

        p <- decay * p;   m <- b1 m + (1 - b1) g;   v <- b2 v + (1 - b2) g^2
        p <- p - step_size * m / (sqrt(v) + eps_hat)
    """
    scratch = buffers.empty(p.shape, p.dtype)
    if decay != 1.0:
        p *= decay
    # Why not the shorter g + b (m - g): in float32 it cancels (0.001 g^2 computed as
    # g^2 - 0.999 g^2 on the first step) and drifts from PyTorch.
    np.multiply(g, 1.0 - b1, out=scratch)
    m *= b1
    m += scratch  # m = b1 m + (1 - b1) g
    np.multiply(g, g, out=scratch)
    scratch *= 1.0 - b2
    v *= b2
    v += scratch  # v = b2 v + (1 - b2) g^2
    np.sqrt(v, out=scratch)
    scratch += eps_hat
    np.divide(m, scratch, out=scratch)
    scratch *= step_size
    p -= scratch


@register_kernel("adamw")
def adamw(params: list[np.ndarray], grads: list[np.ndarray], exp_avgs: list[np.ndarray],
          exp_avg_sqs: list[np.ndarray], steps: list[int], lr: float, beta1: float,
          beta2: float, eps: float, weight_decay: float) -> None:
    """``optim.adamw`` fused and in two threads (see the module docstring)."""
    updates = []
    for p, g, m, v, t in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
        sqrt_bias2 = math.sqrt(1.0 - beta2 ** t)
        updates.append(((p, g, m, v), (1.0 - lr * weight_decay, beta1, beta2, eps * sqrt_bias2,
                                       lr * sqrt_bias2 / (1.0 - beta1 ** t))))
    if not updates:
        return

    def run(ranges: list[tuple[int, slice]]) -> None:
        for i, elements in ranges:
            arrays, coefficients = updates[i]
            if elements.stop - elements.start < arrays[0].size:  # a piece: flat views
                arrays = tuple(a.reshape(-1)[elements] for a in arrays)
            adamw_update(*arrays, *coefficients)

    plan = plan_threads([arrays for arrays, _ in updates])
    run_parts([lambda ranges=ranges: run(ranges) for ranges in plan if ranges])
