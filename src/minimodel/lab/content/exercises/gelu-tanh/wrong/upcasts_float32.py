"""Wrong dtype: multiplying by a float64 *array* turns float32 inputs into float64 outputs."""

import numpy as np

HALF = np.array([0.5])  # a 1-element float64 array, not a scalar


def gelu(x):
    inner = np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)
    return (HALF * x * (1 + np.tanh(inner))).reshape(x.shape)
