"""``Dropout``: a regulariser active in training mode only."""

from __future__ import annotations

import numpy as np

import minimodel.functional as F
from minimodel.nn.module import Module
from minimodel.tensor import Tensor


class Dropout(Module):
    """Zero activations with probability ``p`` in training mode; identity in eval mode."""

    def __init__(self, p: float = 0.0, rng: np.random.Generator | None = None) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.p = p
        self.rng = rng

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.rng)

    def extra_repr(self) -> str:
        return f"p={self.p}"
