"""Reference: an embedding lookup is a row gather."""


def embed(ids, E):
    return E[ids]  # (N, T) ids -> (N, T, d)
