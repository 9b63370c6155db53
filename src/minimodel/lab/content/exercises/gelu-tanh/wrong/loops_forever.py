"""Never returns: the loop condition can never become false."""

import numpy as np


def gelu(x):
    y = np.zeros_like(x)
    i = 0
    while i >= 0:
        i += 1
    return y
