r"""Unreachable tokens: ids that can never be the argmax of the head, whatever the hidden state.

The head scores token i as ``logit_i = h . w_i + b_i``. Token i can win for some h exactly
when a *witness* exists: an h with ``logit_i > logit_j`` for every other j. Without a bias it
has none exactly when ``w_i`` lies in the convex hull of the other rows, ``w_i = sum_j l_j w_j``
with ``l_j >= 0`` and ``sum_j l_j = 1``: then ``h . w_i = sum_j l_j (h . w_j) <= max_j h . w_j``
for every h (Demeter et al. 2020, "stolen probability"). With a bias (BERT's decoder bias) the
same mixture must also satisfy ``sum_j l_j b_j >= b_i`` (by the theorem of the alternative:
then ``logit_i <= sum_j l_j logit_j`` for every h); a large enough bias makes even a row inside
the hull win. With a tied head these rows are the embedding rows themselves.

Two tests, each making only the claim it proves:

1. **Witness** (proves *reachable*): try ``h = w_i``, then ``h = w_i - mean row``. Token i
   wins when ``h . w_i - max_{j != i} h . w_j`` exceeds a float32 rounding margin; most rows
   pass. (With a bias, ``t h`` for a large enough t wins too: the bias is a constant.) This costs one (V, d) @ (d, k) product per k rows checked.
2. **Linear programme** (proves *unreachable*): for a row with no witness, ask
   ``scipy.optimize.linprog`` for the weights ``l`` above. A feasible answer is verified by
   recomputing ``|sum_j l_j w_j - w_i|``; only a verified answer is reported as unreachable,
   with the tokens that mix into it. Infeasible means reachable.

Small vocabularies (``V^2 d`` within :data:`FULL_BUDGET`) are checked completely. Large ones
are *sampled*: the rows nearest the centre of the cloud (where hull interiors lie), up to the
budget, plus rows flagged by other checks; the report says how many rows were checked, and a
row that is neither proven reachable nor unreachable is counted as undecided, never called
unreachable. scipy is optional (``pip install minimodel[doctor]``): without it rows with no
witness stay undecided.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

import numpy as np

from minimodel.doctor.findings import row_norms
from minimodel.doctor.memo import remembered

FULL_BUDGET = 2e10         # multiply-adds for checking every row (V^2 d), e.g. V=5000, d=768
SAMPLE_BUDGET = 3e10       # for the sampled rows of a large vocabulary (k V d)
MAX_LP = 64                # linear programmes for a large matrix (each is (d+1) x (V-1))
LP_ALL_SIZE = 2_000_000    # up to this many entries (V d) every row without a witness gets one
CHUNK = 256                # rows per matrix product: (V, 256) float32 is 51 MB at V=50257
HULL_TOLERANCE = 1e-5      # relative to a typical row norm (see hull_weights)
MARGIN = 1e-5              # relative: float32 dot products of length d are good to ~1e-6 sqrt(d)


@dataclass
class Reachability:
    method: str                       # "all rows" or "sampled"
    checked: int
    reachable: int = 0
    unreachable: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    undecided: list[int] = field(default_factory=list)
    never_tried: list[int] = field(default_factory=list)  # undecided: past the LP limit
    lp_available: bool = True


def rows_to_check(W: np.ndarray, extra: np.ndarray) -> tuple[np.ndarray, str]:
    """Every row when affordable, else the rows nearest the centre plus ``extra``."""
    V, d = W.shape
    if V * V * d <= FULL_BUDGET:
        return np.arange(V), "all rows"
    k = max(1, int(SAMPLE_BUDGET // (V * d)))
    mean = W.mean(axis=0, dtype=np.float64)  # (d,)
    distance = row_norms(W) ** 2 - 2 * (W @ mean.astype(W.dtype)) + mean @ mean  # |w - m|^2
    central = np.argpartition(distance, min(k, V - 1))[:k]
    return np.union1d(central, extra.astype(np.int64)), "sampled"


def witnesses(W: np.ndarray, rows: np.ndarray, centre: np.ndarray | None = None
              ) -> np.ndarray:
    """Boolean per row of ``rows``: does ``h = w_i - centre`` make token i the strict argmax?"""
    centre = np.zeros(W.shape[1], W.dtype) if centre is None else centre
    top = float(row_norms(W).max())
    ok = np.zeros(len(rows), dtype=bool)
    for start in range(0, len(rows), CHUNK):
        ids = rows[start:start + CHUNK]
        H = W[ids] - centre  # (k, d) one candidate hidden state per row
        scores = W @ H.T  # (V, k): score of every token j for each h
        cols = np.arange(len(ids))
        own = scores[ids, cols].copy()
        scores[ids, cols] = -np.inf
        margin = MARGIN * np.linalg.norm(H, axis=1) * top  # float32 rounding, with room
        ok[start:start + CHUNK] = own - scores.max(axis=0) > margin
    return ok


def hull_weights(W: np.ndarray, i: int, bias: np.ndarray | None = None
                 ) -> np.ndarray | None | bool:
    """Weights ``l`` (V-1,) with ``w_i = sum l_j w_j`` verified, False when infeasible (so i is
    reachable), None when the LP failed to answer. Needs scipy.

    The rows are divided by a typical row norm first, so the solver's absolute tolerances
    mean the same at every scale; the answer is accepted when ``|sum_j l_j w_j - w_i|`` is
    below :data:`HULL_TOLERANCE` of that norm (then ``h . w_i`` can exceed every other score by
    at most that fraction of ``|h|`` times a typical row: never a real win).
    """
    from scipy.optimize import linprog  # optional dependency (the doctor extra)

    scale = float(np.median(row_norms(W))) or 1.0  # a typical row, never 0
    others = np.delete(W, i, axis=0).astype(np.float64) / scale  # (V-1, d)
    target = W[i].astype(np.float64) / scale  # (d,)
    A = np.vstack([others.T, np.ones(len(others))])  # (d+1, V-1)
    b_others = None if bias is None else np.delete(bias, i).astype(np.float64) / scale
    bias_rows = {} if b_others is None else {  # sum_j l_j b_j >= b_i, written as <=
        "A_ub": -b_others[None, :], "b_ub": np.array([-float(bias[i]) / scale])}
    result = linprog(np.zeros(len(others)), A_eq=A, b_eq=np.append(target, 1.0),
                     bounds=(0, None), method="highs", **bias_rows)
    if result.status == 2:  # infeasible: outside the hull
        return False
    if result.status != 0:
        return None
    weights = np.clip(result.x, 0, None)
    error = np.linalg.norm(weights @ others - target)
    if b_others is not None and weights @ b_others < float(bias[i]) / scale - HULL_TOLERANCE:
        return None  # the bias inequality does not hold on the verified weights
    return weights if error <= HULL_TOLERANCE and abs(weights.sum() - 1) <= HULL_TOLERANCE \
        else None


@remembered
def find_unreachable(W: np.ndarray, extra: np.ndarray | None = None,
                     bias: np.ndarray | None = None) -> Reachability:
    """Check the rows of the head ``W`` (V, d) with its bias ``b`` (V,) if it has one; see the
    module docstring."""
    rows, method = rows_to_check(W, np.zeros(0) if extra is None else extra)
    ok = witnesses(W, rows)
    ok[~ok] = witnesses(W, rows[~ok], W.mean(axis=0))  # second try: h = w_i - mean row
    result = Reachability(method, len(rows), reachable=int(ok.sum()))
    lp_limit = len(rows) if W.size <= LP_ALL_SIZE else MAX_LP
    # whether the LP can run, without importing scipy.optimize when no row needs it
    result.lp_available = _importable("scipy.optimize")
    for n, i in enumerate(rows[~ok]):
        answer = hull_weights(W, int(i), bias) if result.lp_available and n < lp_limit else None
        if answer is False:
            result.reachable += 1
        elif answer is None:
            result.undecided.append(int(i))
            if result.lp_available and n >= lp_limit:
                result.never_tried.append(int(i))
        else:
            others = np.delete(np.arange(W.shape[0]), i)
            top = np.argsort(answer)[::-1][:4]
            result.unreachable[int(i)] = [(int(others[j]), float(answer[j])) for j in top
                                          if answer[j] > 1e-6]
    return result


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or hidden (sys.modules None)
        return False
