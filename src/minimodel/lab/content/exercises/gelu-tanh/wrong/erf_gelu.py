"""Wrong: the exact GELU x * Phi(x) with erf, not the tanh approximation asked for."""

import math

import numpy as np

_erf = np.vectorize(lambda v: math.erfc(-v / math.sqrt(2.0)) - 1.0)


def gelu(x):
    return (0.5 * x * (1.0 + _erf(x))).astype(x.dtype)
