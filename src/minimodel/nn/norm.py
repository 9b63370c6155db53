"""``LayerNorm``: normalise each position's features, then scale and shift."""

from __future__ import annotations

import numpy as np

import minimodel.functional as F
from minimodel.nn.checks import check_last_dim, check_positive
from minimodel.nn.module import Module
from minimodel.nn.parameter import Parameter
from minimodel.tensor import Tensor


class LayerNorm(Module):
    """Normalise the last axis to zero mean and unit (population) variance, then scale and
    shift by learned ``weight`` (ones) and ``bias`` (zeros); see ``F.layer_norm``."""

    def __init__(self, d: int, eps: float = 1e-5, elementwise_affine: bool = True) -> None:
        check_positive(d=d)
        super().__init__()
        self.eps = eps
        self.weight = Parameter(np.ones(d, dtype=np.float32)) if elementwise_affine else None
        self.bias = Parameter(np.zeros(d, dtype=np.float32)) if elementwise_affine else None
        self.d = d

    def forward(self, x: Tensor) -> Tensor:
        check_last_dim(x, self.d, "LayerNorm")
        return F.layer_norm(x, self.eps, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"{self.d}, eps={self.eps}"
