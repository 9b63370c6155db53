"""Wrong: adds the output-layer gradient as if w_out were tied to w_in; the gradient stops being sparse."""

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
    # Every context slot receives dh / C; np.add.at adds repeated ids instead of overwriting.
    contrib = np.repeat(dh / C, C, axis=0)                    # (B*C, d), row-major like ravel
    np.add.at(grad, context_ids.reshape(-1), contrib)
    grad += dlogits.T @ h                                     # (V, d) dense
    return loss, grad
