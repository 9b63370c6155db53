"""Wrong: the sigmoid shortcut x * sigmoid(1.702 x) is a different approximation."""

import numpy as np


def gelu(x):
    return x / (1.0 + np.exp(-1.702 * x))
