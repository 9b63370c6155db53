"""The affine map behind every projection: Linear layers, the attention's Q/K/V and output
projections, and the language-model heads (tied or not)."""

from __future__ import annotations

from typing import Any

from minimodel.dispatch import replaceable
from minimodel.tensor import Tensor, as_tensor


def check_linear_inputs(x: Any, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``x`` as a Tensor, after checking that x (..., in), weight (out, in), bias (out,) fit."""
    x = as_tensor(x)
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features), got shape "
                         f"{weight.shape}")
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input of shape {x.shape} needs a last axis of size "
                         f"{weight.shape[1]} for a weight of shape {weight.shape}")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"linear: bias must have shape ({weight.shape[0]},) for a weight of "
                         f"shape {weight.shape}, got {bias.shape}")
    return x


@replaceable
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""y = x W^T + b, with W of shape (out, in) as in PyTorch.

    Shapes: x (..., in), W (out, in), b (out,) -> y (..., out).

    Gradients (derived by autograd from the two lines below), with g = dL/dy and the leading
    axes of x flattened into N rows:

        dx = g W          (N, out) @ (out, in)
        dW = g^T x        (out, N) @ (N, in): every row contributes, so dW is dense
        db = sum_rows g

    A tied head is ``linear(h, E)`` with E the embedding matrix (V, d): logits = h E^T.
    """
    x = check_linear_inputs(x, weight, bias)
    y = x @ weight.T  # (..., out)
    return y if bias is None else y + bias
