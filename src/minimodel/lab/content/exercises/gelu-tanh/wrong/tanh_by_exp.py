"""Wrong for large |x|: tanh written with exp overflows (inf / inf = nan) near x = 30."""

import math

import numpy as np


def gelu(x):
    u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(2.0 * u)
        tanh = (e - 1.0) / (e + 1.0)
    return 0.5 * x * (1.0 + tanh)
