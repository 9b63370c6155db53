"""Wrong shape: flattening the ids loses the (N, T) layout."""


def embed(ids, E):
    return E[ids.reshape(-1)]  # (N*T, d)
