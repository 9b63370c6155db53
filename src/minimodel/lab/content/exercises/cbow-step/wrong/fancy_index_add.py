"""Wrong: grad[ids] += g writes each repeated id once, so repeats are lost."""

import numpy as np


def cbow_step(context_ids, target_ids, w_in, w_out):
    B, C = context_ids.shape
    h = w_in[context_ids].mean(axis=1)                        # (B, d) mean of context vectors
    logits = h @ w_out.T                                      # (B, V)
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    probs = e / e.sum(axis=1, keepdims=True)                  # (B, V)
    rows = np.arange(B)
    loss = -np.log(probs[rows, target_ids]).mean()
    dlogits = probs
    dlogits[rows, target_ids] -= 1.0
    dlogits /= B                                              # mean over the batch
    dh = dlogits @ w_out                                      # (B, d)
    grad = np.zeros_like(w_in)                                # (V, d), zero outside the contexts
    grad[context_ids] += (dh / C)[:, None, :]                # buffered: duplicates collapse
    return loss, grad
