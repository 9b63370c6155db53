"""Argument checks shared by the layers: clear errors instead of NumPy tracebacks."""

from __future__ import annotations

import numpy as np

from minimodel.tensor import Tensor


def check_positive(**sizes: int) -> None:
    """Refuse sizes that are not positive integers (``bool`` is not a size either)."""
    for name, value in sizes.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def check_last_dim(x: Tensor, expected: int, layer: str) -> None:
    if x.ndim == 0 or x.shape[-1] != expected:
        raise ValueError(f"{layer} expects inputs whose last axis has size {expected}, got "
                         f"shape {x.shape}")
