"""Never returns: waits for an event that nothing will ever set (a deadlock, not a busy loop)."""

import threading

import numpy as np

_ready = threading.Event()


def mlm_forward_tied(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, num_heads):
    _ready.wait()  # nobody calls _ready.set()
    return np.zeros((0, w_emb.shape[0]), dtype=w_emb.dtype)
