"""Reference: the best bigram table is counted, not trained; add-one smoothing keeps unseen
pairs finite, and the loss is the mean negative log-probability of each held-out next id."""

import numpy as np


def counted_bigram_loss(train_ids, val_ids, vocab_size):
    counts = np.ones((vocab_size, vocab_size))                  # (V, V), +1 for every pair
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1)       # repeats counted (not +=)
    p_next = counts / counts.sum(axis=1, keepdims=True)         # each row: P(next | current)
    return float(-np.log(p_next[val_ids[:-1], val_ids[1:]]).mean())
