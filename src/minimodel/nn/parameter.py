"""``Parameter``: a Tensor that a Module registers and an optimizer updates."""

from __future__ import annotations

from typing import Any

import numpy as np

from minimodel.tensor import Tensor


class Parameter(Tensor):
    """A trainable leaf tensor (``requires_grad=True`` by default).

    Its ``.grad`` may be assigned an ``np.ndarray`` of the same shape (e.g. by hand in a lab).
    Parameters are compared by identity: two names holding the same Parameter object are
    one tied parameter.
    """

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        super().__init__(data, requires_grad=requires_grad)
        if self.dtype.kind != "f":
            raise TypeError(f"a Parameter must hold floating-point values, got dtype {self.dtype}")

    def __repr__(self) -> str:
        return f"Parameter(shape={self.shape}, dtype={self.dtype})"

    # Parameters are used as dict keys by identity (optimizer state); keep object hashing.
    __hash__ = object.__hash__


_default_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator that layers use to initialise weights when given no ``rng``."""
    global _default_rng
    _default_rng = np.random.default_rng(seed)


def default_rng() -> np.random.Generator:
    return _default_rng


def normal_(shape: tuple[int, ...], std: float, rng: np.random.Generator | None = None,
            dtype: Any = np.float32) -> np.ndarray:
    """Samples from N(0, std^2) with the given shape."""
    rng = rng if rng is not None else _default_rng
    return (rng.standard_normal(shape) * std).astype(dtype)


def uniform_(shape: tuple[int, ...], bound: float, rng: np.random.Generator | None = None,
             dtype: Any = np.float32) -> np.ndarray:
    """Samples from U(-bound, bound) with the given shape."""
    rng = rng if rng is not None else _default_rng
    return rng.uniform(-bound, bound, size=shape).astype(dtype)
