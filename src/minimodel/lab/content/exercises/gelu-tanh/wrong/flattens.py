"""Wrong shape: works on x.ravel() and returns a 1-d array for any input."""

import math

import numpy as np


def gelu(x):
    v = np.ravel(x)
    return 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v**3)))
