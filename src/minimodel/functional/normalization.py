"""Layer normalisation (Ba et al. 2016), as in GPT-2's pre-LN blocks."""

from __future__ import annotations

from minimodel.dispatch import replaceable
from minimodel.tensor import Tensor, as_tensor


def check_layer_norm_inputs(x: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """``x`` as a Tensor, after checking that weight and bias (when given) are (d,)."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("layer_norm needs at least one axis to normalise, got a scalar")
    d = x.shape[-1]
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.shape != (d,):
            raise ValueError(f"layer_norm over a last axis of size {d} needs {name} of shape "
                             f"({d},), got {p.shape}")
    return x


@replaceable
def layer_norm(x: Tensor, eps: float = 1e-5, weight: Tensor | None = None,
               bias: Tensor | None = None) -> Tensor:
    r"""Normalise the last axis to zero mean and unit variance, then scale and shift:

        mu = mean(x),   var = mean((x - mu)^2)        (population variance: divide by d)
        y  = (x - mu) / sqrt(var + eps) * weight + bias

    eps sits inside the square root, so a constant row (var = 0) gives 0, not a division by
    zero. ``weight`` and ``bias`` are optional, each of shape (d,).

    Gradient (x_hat the normalised input, r = 1 / sqrt(var + eps), gh = g * weight):

        dx = r * (gh - mean(gh) - x_hat * mean(gh * x_hat))
    """
    x = check_layer_norm_inputs(x, weight, bias)
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    centred = x - mean  # (..., d)
    var = (centred * centred).mean(axis=-1, keepdims=True)  # (..., 1)
    y = centred / (var + eps).sqrt()  # (..., d), x_hat
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y
