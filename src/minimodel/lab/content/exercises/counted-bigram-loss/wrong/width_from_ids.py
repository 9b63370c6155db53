import numpy as np


def counted_bigram_loss(train_ids, val_ids, vocab_size):
    # WRONG: the table is as wide as the largest id seen, not vocab_size, so add-one smoothing
    # spreads over too few columns whenever the top ids never occur.
    width = int(max(train_ids.max(), val_ids.max())) + 1
    counts = np.ones((width, width))
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1)
    p_next = counts / counts.sum(axis=1, keepdims=True)
    return float(-np.log(p_next[val_ids[:-1], val_ids[1:]]).mean())
