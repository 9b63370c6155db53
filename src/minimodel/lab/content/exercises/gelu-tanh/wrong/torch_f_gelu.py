"""Forbidden: hands the work to torch.nn.functional.gelu."""

import torch
import torch.nn.functional as F

FRAMEWORK = "torch"


def gelu(x):
    return F.gelu(x, approximate="tanh")
