"""Wrong: the integer numerical rank is not the (real-valued) effective rank."""

import numpy as np


def effective_rank(A):
    return float(np.linalg.matrix_rank(A))
