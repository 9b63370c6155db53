"""Correct too: a plain Python loop accumulates repeated ids one slot at a time."""

import numpy as np


def cbow_step(context_ids, target_ids, w_in, w_out):
    B, C = context_ids.shape
    h = w_in[context_ids].mean(axis=1)
    logits = h @ w_out.T
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    loss = -log_probs[np.arange(B), target_ids].mean()
    dlogits = np.exp(log_probs)
    dlogits[np.arange(B), target_ids] -= 1.0
    dh = (dlogits / B) @ w_out
    grad = np.zeros_like(w_in)
    for b in range(B):
        for c in range(C):
            grad[context_ids[b, c]] += dh[b] / C
    return loss, grad
