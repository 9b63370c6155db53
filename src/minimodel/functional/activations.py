"""Softmax, log-softmax, log-sigmoid, GELU and dropout."""

from __future__ import annotations

import math

import numpy as np

from minimodel.dispatch import replaceable
from minimodel.functional.tensors import where
from minimodel.tensor import Tensor, as_tensor

GELU_C = math.sqrt(2.0 / math.pi)  # a Python float keeps float32 arrays float32 (NEP 50)
GELU_A = 0.044715


@replaceable
def softmax(x: Tensor, axis: int = -1) -> Tensor:
    r"""softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m), with m = max_j x_j.

    Subtracting the row maximum changes nothing mathematically (it cancels between numerator
    and denominator) but keeps exp from overflowing: every exponent is <= 0. Because it
    cancels, m is treated as a constant (``detach``) and no gradient flows through it.
    Entries of -inf (masked positions) get probability 0.

    Gradient: dx = y * (g - sum_j g_j y_j).
    """
    x = as_tensor(x)
    shifted = x - x.max(axis=axis, keepdims=True).detach()  # every entry <= 0
    e = shifted.exp()
    return e / e.sum(axis=axis, keepdims=True)


@replaceable
def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    r"""log softmax(x)_i = (x_i - m) - log sum_j exp(x_j - m), m = max_j x_j (a constant).

    Computed directly rather than as log(softmax(x)): a probability that underflows to 0 would
    give log 0 = -inf, while x_i - m - log(...) stays finite.

    Gradient: dx = g - softmax(x) * sum_j g_j.
    """
    x = as_tensor(x)
    shifted = x - x.max(axis=axis, keepdims=True).detach()
    return shifted - shifted.exp().sum(axis=axis, keepdims=True).log()


def log_sigmoid(x: Tensor) -> Tensor:
    r"""log sigma(x) = log 1 / (1 + exp(-x)) = min(x, 0) - log(1 + exp(-|x|)).

    The second form is the stable one: exp(-|x|) <= 1 never overflows, while the first
    form's exp(-x) overflows for x < -710 (float64) and log(sigma) would hit log 0 = -inf.

    Gradient: d/dx log sigma(x) = 1 - sigma(x) = sigma(-x).
    """
    x = as_tensor(x)
    negative = x.data < 0  # a constant mask: the branch each entry takes
    abs_x = where(negative, -x, x)
    return where(negative, x, 0.0) - (1.0 + (-abs_x).exp()).log()


@replaceable
def gelu(x: Tensor) -> Tensor:
    r"""GELU with the tanh approximation used by GPT-2 (Hendrycks & Gimpel 2016):

        gelu(x) = 0.5 x (1 + tanh(u)),   u = sqrt(2/pi) (x + 0.044715 x^3)

    Gradient: 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), t = tanh(u).
    """
    x = as_tensor(x)
    u = GELU_C * (x + GELU_A * x ** 3)
    return 0.5 * x * (1.0 + u.tanh())


def dropout(x: Tensor, p: float, training: bool = True,
            rng: np.random.Generator | None = None) -> Tensor:
    """Zero each element with probability ``p`` and scale survivors by 1 / (1 - p).

    The scaling keeps the expected value unchanged, so evaluation (no dropout) needs no
    correction. Identity when ``training`` is False or ``p`` is 0.
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return x
    rng = rng if rng is not None else np.random.default_rng()
    keep = (rng.random(x.shape) >= p).astype(x.dtype) / x.dtype.type(1.0 - p)
    return x * Tensor._wrap(keep)
