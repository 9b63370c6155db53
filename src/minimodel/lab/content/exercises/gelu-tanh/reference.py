"""Reference: GELU, tanh approximation (Hendrycks & Gimpel 2016), elementwise in NumPy."""

import math

import numpy as np


def gelu(x):
    # A Python float constant keeps float32 inputs float32; np.sqrt(...) would be a float64
    # NumPy scalar, which promotes float32 arrays under NumPy 2's promotion rules.
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))
