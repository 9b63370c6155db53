"""Reusable memory for the kernels' large temporaries: no page faults, no malloc settings.

Why. A training step makes the same few-MiB arrays hundreds of times (activations saved for
backward, attention scores, gradients). glibc hands large blocks back to the operating system
when they are freed (``munmap``, or trimming the top of the heap), so every step touches fresh
pages again, and a page fault costs more than the arithmetic on the page. ``minimodel train``
can change malloc's settings for its own process (:mod:`minimodel.runtime`), but a library
imported into someone's notebook must not; this module gets the same effect by keeping freed
buffers and handing them out again. (Page-fault counts: BENCHMARKS.md.)

How. :func:`empty` is ``np.empty`` with memory from a free list keyed by byte size. The array
it returns does not own its memory: its ``base`` is a small :class:`_Lease`. Views, reshapes
and slices keep the lease alive (NumPy stops collapsing ``base`` chains at a non-array
object), so the lease dies only when nothing can see the memory any more, and its
``__del__`` puts the buffer back on the free list. A buffer is therefore never handed out
while an array uses it, the same guarantee ``np.empty`` gives; a caller who keeps an array
(say, the logits) simply keeps its buffer out of the pool.

Only blocks of at least :data:`MIN_BYTES` (64 KiB) are pooled, and the pool holds at most
:data:`LIMIT_BYTES` of idle buffers; :func:`clear` releases them all. Why 64 KiB: glibc's
``free()`` of a block that large merges it with free neighbours and, when the free space at the
top of the heap then exceeds its trim threshold (twice the largest block it recently returned),
gives that space back to the operating system; a step's weight gradients (64-256 KiB each at
d=128) are enough to cross it. Smaller blocks stay in malloc's own bins.

Users: the kernels of this package only. The readable code (``tensor``, ``autograd``, ``ops``,
``functional``, ``optim``) allocates with plain NumPy, so with kernels off
(``MINIMODEL_KERNELS=0``) nothing here runs.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

MIN_BYTES = 64 * 1024  # glibc frees smaller blocks into its bins, never to the kernel
LIMIT_BYTES = 1 << 30  # idle buffers kept at most; more are freed normally

_free: dict[int, list[tuple[np.ndarray, int]]] = {}  # nbytes -> [(buffer, address)]
_idle_bytes = 0
# A lease may die in any thread, and inside another pool call when the garbage collector runs
# there: hence a re-entrant lock.
_lock = threading.RLock()


class _Lease:
    """The owner of one pooled buffer while arrays use it; gives it back when deleted."""

    __slots__ = ("buffer", "address", "__array_interface__")

    def __init__(self, buffer: np.ndarray, address: int, shape: tuple[int, ...],
                 dtype: np.dtype) -> None:
        self.buffer, self.address = buffer, address
        self.__array_interface__ = {"data": (address, False), "shape": shape,
                                    "typestr": dtype.str, "version": 3}

    def __del__(self) -> None:
        try:
            _give_back(self.buffer, self.address)
        except Exception:  # interpreter shutdown: module globals may already be gone
            pass


def _give_back(buffer: np.ndarray, address: int) -> None:
    global _idle_bytes
    with _lock:
        if _idle_bytes + buffer.nbytes <= LIMIT_BYTES:
            _free.setdefault(buffer.nbytes, []).append((buffer, address))
            _idle_bytes += buffer.nbytes


def empty(shape: tuple[int, ...] | int, dtype: Any) -> np.ndarray:
    """An uninitialised C-contiguous array, like ``np.empty(shape, dtype)``, whose memory is
    reused from earlier arrays of the same byte size when one is free."""
    global _idle_bytes
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize * math.prod(shape)
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    with _lock:
        stack = _free.get(nbytes)
        if stack:
            buffer, address = stack.pop()
            _idle_bytes -= nbytes
        else:
            buffer = None
    if buffer is None:
        buffer = np.empty(nbytes, np.uint8)
        address = buffer.__array_interface__["data"][0]
    return np.asarray(_Lease(buffer, address, shape, dtype))


def clear() -> int:
    """Free every idle buffer; returns the number of bytes released."""
    global _idle_bytes
    with _lock:
        released, _idle_bytes = _idle_bytes, 0
        _free.clear()
    return released


def idle_bytes() -> int:
    """Bytes held by the pool and not used by any array right now."""
    return _idle_bytes
