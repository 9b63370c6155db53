"""Forbidden: minimodel is the library being learned; its code is off limits here."""

import numpy as np
from minimodel import nn


def embed(ids, E):
    return np.asarray(E)[ids]
