import numpy as np


def counted_bigram_loss(train_ids, val_ids, vocab_size):
    counts = np.ones((vocab_size, vocab_size))
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1)
    p_pair = counts / counts.sum()                       # the joint p(a, b), not p(b | a)
    return float(-np.log(p_pair[val_ids[:-1], val_ids[1:]]).mean())
