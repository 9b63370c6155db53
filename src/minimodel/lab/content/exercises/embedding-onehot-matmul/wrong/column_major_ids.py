"""Wrong values: ids flattened in Fortran order, then reshaped in C order."""

import numpy as np


def embed_onehot(ids, E):
    n, t = ids.shape
    flat = ids.ravel(order="F")
    onehot = np.zeros((n * t, E.shape[0]), dtype=E.dtype)
    onehot[np.arange(n * t), flat] = 1
    return (onehot @ E).reshape(n, t, -1)
