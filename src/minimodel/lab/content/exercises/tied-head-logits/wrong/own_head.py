"""Wrong: an untied head with its own (random) weights instead of E.T."""

import numpy as np


def tied_logits(h, E):
    V, d = E.shape
    W = np.random.default_rng(0).normal(scale=0.02, size=(d, V)).astype(E.dtype)
    return h @ W
