"""The expensive numbers of the checks, computed once per matrix during one diagnosis.

While transformers is asked in a child process (:mod:`.background`), the doctor rehearses its
expensive checks (under-trained rows, reachability) on the built-in table's guess of E and W.
When transformers then names the same tensors, the subject holds the very same arrays (they are
read once per list of tensor names), so the numbers computed on the guess are the numbers of the
real run: :func:`remembered` functions return them from here instead of computing again. When
transformers names other tensors, the arrays differ and everything is computed anew. Either
way the verdict is the one the serial path gives.

A matrix argument is recognised by the memory it views (address, dtype, shape, strides): the
matrices are never copied nor written to. A vector (flagged row ids, a head's bias: built or
read anew by each caller, and short) is recognised by its values. The arguments are kept with
their result, so no address is freed and reused while the memo lives (:func:`remembering`);
outside it, the functions simply compute.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

_memos: list[dict[tuple, tuple[tuple, Any]]] = []  # the memo of the diagnosis under way


@contextlib.contextmanager
def remembering() -> Iterator[None]:
    """Keep the results of :func:`remembered` functions until the block ends."""
    _memos.append({})
    try:
        yield
    finally:
        _memos.pop()


def _identity(value: Any) -> Any:
    if not isinstance(value, np.ndarray):
        return value  # None, numbers, strings
    if value.ndim <= 1:
        return ("values", value.dtype.str, value.shape, value.tobytes())
    return ("memory", value.__array_interface__["data"][0], value.dtype.str, value.shape,
            value.strides)


def remembered(fn: Callable) -> Callable:
    """``fn(*args)`` computed once per arguments inside :func:`remembering`; a copy of the result
    is returned (callers may change what they get)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _memos:
            return fn(*args, **kwargs)
        key = (fn.__qualname__, *map(_identity, args),
               *((name, _identity(v)) for name, v in sorted(kwargs.items())))
        memo = _memos[-1]
        if key not in memo:  # the arguments are kept: their memory stays theirs
            memo[key] = ((args, kwargs), fn(*args, **kwargs))
        return copy.deepcopy(memo[key][1])
    return wrapper
