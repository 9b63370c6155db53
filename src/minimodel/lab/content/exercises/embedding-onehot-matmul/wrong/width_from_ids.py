"""Wrong width: sizes the one-hot by the largest id seen instead of the vocabulary V."""

import numpy as np


def embed_onehot(ids, E):
    onehot = np.eye(int(ids.max()) + 1, dtype=E.dtype)[ids]  # (N, T, max+1), not (N, T, V)
    return onehot @ E
