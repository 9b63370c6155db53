r"""The gradient ledger: how much of a tied E's gradient comes from the lookup, how much from the head.

A tied E is used twice in one forward pass, so its gradient is the sum of two paths
(``nn/lm_head.py``)::

    dE = dE_lookup + dE_head
         scatter-add of dx into        dlogits^T @ h: every row, at every step
         the rows of the batch's ids

Each path is measured by cutting the other, with :func:`minimodel.autograd.grad`:

* lookup: the model's own hidden states ``h = f(E[ids])``, scored by a *detached copy* of E
  (a constant), so only the lookup path reaches E;
* head: the same ``h`` detached (a constant), scored by E itself, so only the head path does.

The two add up to the full tied gradient of the model's loss (checked every time, and by the
tests). Rows are grouped by how often their token occurs in the training text: rare tokens'
rows get little or nothing from the lookup, so the head is nearly all they learn from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import minimodel.functional as F
from minimodel.autograd import grad, no_grad
from minimodel.tensor import Tensor

SUM_TOLERANCE = 1e-6


@dataclass
class Ledger:
    lookup: np.ndarray      # (V, d) the lookup path's share of dE
    head: np.ndarray        # (V, d) the head path's share
    full: np.ndarray        # (V, d) the tied gradient, computed in one go

    @property
    def sum_error(self) -> float:
        """max |lookup + head - full|: zero up to rounding when the tie is one object."""
        return float(np.max(np.abs(self.lookup + self.head - self.full)))


def gradient_ledger(model, x: np.ndarray, y: np.ndarray) -> Ledger:
    """The two shares of ``model.token_emb.weight``'s gradient on one batch (x, y) (B, T).

    ``model`` is a tied GPT in eval mode (no dropout, so the three passes see the same h).
    """
    E = model.token_emb.weight  # (V, d), also the head's matrix
    h = model.hidden_states(x)  # (B, T, d), reads E through the lookup
    (lookup,) = grad(F.linear_cross_entropy(h, Tensor(E.data.copy()), y), [E])
    with no_grad():
        h_const = Tensor(model.hidden_states(x).data)  # the lookup path cut
    (head,) = grad(F.linear_cross_entropy(h_const, E, y), [E])
    (full,) = grad(model.loss(x, y), [E])
    return Ledger(lookup, head, full)


def frequency_buckets(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Token ids grouped by how often they occur: the most frequent ids that make up half of
    all occurrences, the rest of the seen ids, and the ids never seen."""
    seen = np.flatnonzero(counts > 0)
    order = seen[np.argsort(counts[seen])[::-1]]  # most frequent first
    cumulative = np.cumsum(counts[order]) / max(int(counts.sum()), 1)
    head_count = int(np.searchsorted(cumulative, 0.5) + 1)
    return {"frequent": order[:head_count], "seen": order[head_count:],
            "unseen": np.flatnonzero(counts == 0)}


def shares(ledger: Ledger, buckets: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Per bucket (and "all"): the Frobenius norms of both paths' rows and the lookup's
    share ``|lookup| / (|lookup| + |head|)``."""
    out = {}
    groups = {"all": np.arange(ledger.full.shape[0]), **buckets}
    for name, ids in groups.items():
        a = float(np.linalg.norm(ledger.lookup[ids]))
        b = float(np.linalg.norm(ledger.head[ids]))
        out[name] = {"rows": int(len(ids)), "lookup_norm": a, "head_norm": b,
                     "lookup_share": a / (a + b) if a + b > 0 else 0.0}
    return out
