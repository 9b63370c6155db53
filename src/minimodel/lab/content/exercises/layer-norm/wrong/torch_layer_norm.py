"""Forbidden: torch's own layer_norm."""

import torch.nn.functional as F

FRAMEWORK = "torch"


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], weight, bias, eps)
