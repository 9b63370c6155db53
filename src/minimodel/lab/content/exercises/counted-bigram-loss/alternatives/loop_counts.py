"""An honest alternative: count the pairs in a loop, compute each probability from the counts."""

import math
from collections import Counter


def counted_bigram_loss(train_ids, val_ids, vocab_size):
    pairs = Counter(zip(train_ids[:-1].tolist(), train_ids[1:].tolist()))
    firsts = Counter(train_ids[:-1].tolist())
    total = 0.0
    for a, b in zip(val_ids[:-1].tolist(), val_ids[1:].tolist()):
        total -= math.log((1 + pairs[(a, b)]) / (vocab_size + firsts[a]))
    return total / (len(val_ids) - 1)
