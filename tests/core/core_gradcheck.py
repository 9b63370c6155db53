"""Finite-difference gradient checking for the core tests (float64, central differences).

For a function ``fn(*tensors) -> Tensor`` (or a list of Tensors) we compare the autograd
gradient of the random projection ``L = sum(out * R)`` with the numerical one

    dL/dx_i ~ (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)

A random R (instead of ``out.sum()``) makes every output element count with a different
weight, so a backward rule that permutes or mixes up output positions cannot pass by symmetry.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

import minimodel as mm
from minimodel.tensor import Tensor

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-6


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def analytic_grads(fn: Callable, arrays: Sequence[np.ndarray], projections: list[np.ndarray],
                   wrt: Sequence[int]) -> list[np.ndarray]:
    """Autograd gradients of sum_k sum(out_k * R_k) with respect to ``arrays[i]`` for i in wrt.

    The arrays are wrapped as they are (views, non-contiguous layouts are kept).
    """
    tensors = [Tensor(a, requires_grad=(i in wrt)) for i, a in enumerate(arrays)]
    outs = _as_list(fn(*tensors))
    for out, r in zip(outs, projections):
        out.backward(r)  # several outputs: gradients accumulate into the leaves (+=)
    grads = []
    for i in wrt:
        g = tensors[i].grad
        assert g is not None, f"input {i} received no gradient"
        assert g.shape == arrays[i].shape, (g.shape, arrays[i].shape)
        assert g.dtype == arrays[i].dtype, (g.dtype, arrays[i].dtype)
        grads.append(g)
    return grads


def numeric_grads(fn: Callable, arrays: Sequence[np.ndarray], projections: list[np.ndarray],
                  wrt: Sequence[int], eps: float = EPS) -> list[np.ndarray]:
    """Central-difference gradients of sum_k sum(out_k * R_k), one element at a time."""
    work = [np.array(a, dtype=a.dtype, copy=True, order="C") for a in arrays]

    def loss() -> float:
        with mm.no_grad():
            outs = _as_list(fn(*[Tensor(w) for w in work]))
        return float(sum(np.sum(o.data * r) for o, r in zip(outs, projections)))

    grads = []
    for i in wrt:
        x = work[i]
        g = np.zeros_like(x)
        flat_x, flat_g = x.reshape(-1), g.reshape(-1)  # views: both are C-contiguous
        for j in range(flat_x.size):
            orig = flat_x[j]
            flat_x[j] = orig + eps
            up = loss()
            flat_x[j] = orig - eps
            down = loss()
            flat_x[j] = orig
            flat_g[j] = (up - down) / (2 * eps)
        grads.append(g)
    return grads


def check_grads(fn: Callable, *arrays: np.ndarray, wrt: Sequence[int] | None = None,
                seed: int = 0, rtol: float = RTOL, atol: float = ATOL) -> list[np.ndarray]:
    """Assert autograd and finite differences agree for every input listed in ``wrt``.

    Returns the analytic gradients (so callers can make further assertions).
    """
    for a in arrays:
        assert a.dtype == np.float64 or a.dtype.kind in "iub", "grad checks run in float64"
    wrt = [i for i, a in enumerate(arrays) if a.dtype == np.float64] if wrt is None else list(wrt)
    with mm.no_grad():
        outs = _as_list(fn(*[Tensor(a) for a in arrays]))
    rng = np.random.default_rng(seed)
    projections = [rng.standard_normal(o.shape) for o in outs]
    got = analytic_grads(fn, arrays, projections, wrt)
    want = numeric_grads(fn, arrays, projections, wrt)
    for i, g, w in zip(wrt, got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i} differs from finite differences")
    return got
