"""Wrong: np.var(..., ddof=1) is the sample variance; LayerNorm uses the population one."""

import numpy as np


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y
