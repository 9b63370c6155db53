"""Reference: the tied head is the transposed embedding table."""


def tied_logits(h, E):
    return h @ E.T  # (N, T, d) @ (d, V) -> (N, T, V)
