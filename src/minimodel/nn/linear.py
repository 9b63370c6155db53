"""``Linear``: the affine layer y = x W^T + b."""

from __future__ import annotations

import math

import numpy as np

import minimodel.functional as F
from minimodel.nn.checks import check_last_dim, check_positive
from minimodel.nn.module import Module
from minimodel.nn.parameter import Parameter, uniform_
from minimodel.tensor import Tensor


class Linear(Module):
    """y = x @ W.T + b, with W of shape (out_features, in_features) as in PyTorch.

    Initialised like PyTorch: W and b ~ U(-1/sqrt(in), 1/sqrt(in)). A model built on top may
    re-initialise its layers another way (GPT-2 draws N(0, 0.02²)).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 rng: np.random.Generator | None = None) -> None:
        check_positive(in_features=in_features, out_features=out_features)
        super().__init__()
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(uniform_((out_features, in_features), bound, rng))  # (out, in)
        self.bias = Parameter(uniform_((out_features,), bound, rng)) if bias else None

    @property
    def in_features(self) -> int:
        return self.weight.shape[1]

    @property
    def out_features(self) -> int:
        return self.weight.shape[0]

    def forward(self, x: Tensor) -> Tensor:
        check_last_dim(x, self.in_features, "Linear")
        return F.linear(x, self.weight, self.bias)  # (..., out)

    def extra_repr(self) -> str:
        return f"in={self.in_features}, out={self.out_features}, bias={self.bias is not None}"
