"""Kernel for ``autograd.sum_gradients``: the sum rule written into an array a kernel handed over.

Why. The definition, ``total + more``, makes a third array, because in general either
gradient may be shared (``Add`` hands one array to both of its inputs; a backward may return
a view of something it keeps). For a tied matrix E (V, d) that third array is the largest
of a training step at the end of backward: the head's dE, the lookup's scatter-add and their
sum, three (V, d) arrays at once (24.5 MiB each at V = 50,257, d = 128).

How. A kernel that returns a gradient array nobody else can see (made for the occasion, not
kept, not a view) *for a leaf* (a parameter) marks it with :func:`hand_over`. When one of the
two gradients being summed is such an array, the sum is added into it, ``mine += other``: the
same numbers (addition is commutative, bit for bit), one array fewer. Anything else is summed
as the definition does. Why leaves only: a leaf's gradient is only ever summed into; the
gradient of any other tensor is passed on to the backward of the operation that made it,
which may hand that very array to two inputs (``Add``), and then it is no longer ours.

The marks are weak: an array's mark ends when the array dies, so a later array at the same
address is not mistaken for it.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from minimodel.autograd import sum_gradients as _definition  # noqa: F401 (registered first)
from minimodel.dispatch import register_kernel

_handed_over: dict[int, weakref.ref] = {}  # id(array) -> weak reference to that array
_lock = threading.Lock()  # the batch split sums gradients in two threads


def hand_over(array: np.ndarray) -> np.ndarray:
    """Mark ``array``, the gradient of a leaf, as one its maker no longer uses and shares with
    no one, so the sum rule may add into it; returns it."""
    key = id(array)

    def forget(_ref: weakref.ref, key: int = key) -> None:
        with _lock:
            if _handed_over.get(key) is _ref:
                del _handed_over[key]

    with _lock:
        _handed_over[key] = weakref.ref(array, forget)
    return array


def is_handed_over(array: np.ndarray) -> bool:
    with _lock:
        ref = _handed_over.get(id(array))
    return ref is not None and ref() is array


def _can_add_into(mine: np.ndarray, other: np.ndarray) -> bool:
    """True when ``mine += other`` gives exactly ``mine + other``: ``mine`` was handed over,
    is writeable, and already has the result's shape and dtype."""
    return (is_handed_over(mine) and mine.flags.writeable and mine.shape == other.shape
            and mine.dtype == np.result_type(mine, other))


@register_kernel("sum_gradients")
def sum_gradients(total: np.ndarray, more: np.ndarray) -> np.ndarray:
    for mine, other in ((total, more), (more, total)):
        if _can_add_into(mine, other):
            mine += other
            return mine
    return total + more
