r"""Under-trained rows: embedding rows that look as if training never reached them.

A row of E moves through the lookup only when its token appears in a batch. A token that is
in the tokenizer but (almost) never in the training text — a leftover of the tokenizer's own
training data, a reserved special token — keeps its initial vector, or drifts only through
the head (in a tied model every row receives ``dlogits^T h`` at every step, which mostly lowers
that token's score). Such rows stand out from the trained ones:

* **exact zeros** or **exact duplicates** (initialised to zero, or to one mean vector by a
  resize), which no training would leave;
* **norm outliers**: with ``z_i = (ln|e_i| - median) / (1.4826 MAD)``, the robust z-score of
  a row's log-norm among all used rows, rows with ``z_i < -6`` *and* a norm below a quarter
  of the median are far smaller than the rest, as rows still at a small initialisation are
  next to rows that grew while training.

One pattern is no defect: ``model.resize_token_embeddings(n, pad_to_multiple_of=64)``
(transformers' ``mean_resizing``, the default) writes every new row at the mean of the old
rows (plus noise of 1e-9 of their covariance). Such rows sit at the centre of the cloud,
inside its hull, never trained: exactly what they should be before fine-tuning. They are found
as the trailing rows within :data:`NEW_ROW_TOLERANCE` of the mean of the rows before them, and
reported as information, not as under-trained or unreachable.

A model that is not trained at all has every row at its initialisation and nothing stands
out, so nothing is reported: the check compares rows with each other, never with a guessed
initial distribution. Padding rows (beyond the tokenizer) are left to the sizes check, and the
config's ``pad_token_id`` row is expected to be zero (PyTorch's ``padding_idx`` keeps it so).
"""

from __future__ import annotations

import numpy as np

from minimodel.doctor.findings import INFO, OK, WARNING, Finding, row_norms, token_list
from minimodel.doctor.memo import remembered
from minimodel.doctor.names import pad_token_ids
from minimodel.doctor.subject import Subject

CHECK = "rows"
Z_LIMIT = 6.0
SMALL_FRACTION = 0.25  # and below a quarter of the median norm: an outlier in plain terms too
MAD_TO_STD = 1.4826  # MAD of a normal distribution times this is its standard deviation
NEW_ROW_TOLERANCE = 1e-3  # |e_i - mean| over the rows' median distance from the mean
NEAR_MEAN = 0.05          # first, loose pass on every row (squared distances via dot products)


def robust_z(values: np.ndarray) -> np.ndarray:
    """(values - median) / (1.4826 * MAD); zeros when the values do not spread."""
    median = np.median(values)
    mad = np.median(np.abs(values - median)) * MAD_TO_STD
    return np.zeros_like(values) if mad == 0 else (values - median) / mad


def duplicate_rows(E: np.ndarray) -> np.ndarray:
    """Ids of rows that equal another row exactly (zero rows included), sorted.

    Rows are grouped by a hash of their bytes (a dictionary of V keys, instead of sorting V
    rows of d numbers), and rows that share a hash are compared exactly.
    """
    groups: dict[int, list[int]] = {}
    for i, row in enumerate(np.ascontiguousarray(E)):
        groups.setdefault(hash(row.tobytes()), []).append(i)
    out = set()
    for ids in (g for g in groups.values() if len(g) > 1):
        for a in ids:
            if any(b != a and np.array_equal(E[a], E[b]) for b in ids):
                out.add(a)
    return np.array(sorted(out), dtype=np.int64)


@remembered
def under_trained(E: np.ndarray) -> dict[str, np.ndarray]:
    """{"zero": ids, "duplicate": ids, "small": ids} among the rows of ``E`` (V, d)."""
    norms = row_norms(E)  # (V,)
    zero = np.flatnonzero(norms == 0)
    duplicate = np.setdiff1d(duplicate_rows(E), zero)
    nonzero = np.flatnonzero(norms > 0)
    z = robust_z(np.log(norms[nonzero])) if nonzero.size else np.zeros(0)
    far_below = norms[nonzero] < SMALL_FRACTION * np.median(norms[nonzero]) if nonzero.size \
        else np.zeros(0, dtype=bool)
    small = np.setdiff1d(nonzero[(z < -Z_LIMIT) & far_below], duplicate)
    return {"zero": zero, "duplicate": duplicate, "small": small}


@remembered
def new_rows_at_mean(E: np.ndarray) -> np.ndarray:
    """Ids of the trailing rows of ``E`` (V, d) that sit at the mean of the rows before them
    (a mean-initialising resize), sorted; empty when there are none."""
    V = E.shape[0]
    if V < 4:
        return np.zeros(0, dtype=np.int64)
    mean = E.mean(axis=0, dtype=np.float64)  # (d,)
    dist2 = row_norms(E) ** 2 - 2 * (E @ mean.astype(E.dtype)) + mean @ mean  # |e_i - m|^2
    typical = float(np.median(dist2))
    if typical <= 0:
        return np.zeros(0, dtype=np.int64)
    near = dist2 < NEAR_MEAN ** 2 * typical  # (V,)
    run = V - 1 - int(np.flatnonzero(~near).max()) if not near.all() else V
    if run == 0 or run > V // 2:  # none, or most rows: then they are not the "new" ones
        return np.zeros(0, dtype=np.int64)
    first = V - run
    old_mean = E[:first].mean(axis=0, dtype=np.float64)
    exact = np.linalg.norm(E[first:] - old_mean, axis=1)  # (run,): computed directly
    if np.all(exact <= NEW_ROW_TOLERANCE * np.sqrt(typical)):
        return np.arange(first, V, dtype=np.int64)
    return np.zeros(0, dtype=np.int64)


def check_rows(s: Subject) -> list[Finding]:
    used = min(s.vocab.size, s.E.shape[0]) if s.vocab is not None else s.E.shape[0]
    new = new_rows_at_mean(s.E)
    out = []
    if new.size:
        out.append(Finding(CHECK, INFO, "rows.new_at_mean",
                           {"count": int(new.size), "first": int(new[0]), "last": int(new[-1]),
                            "tokens": token_list(new, s.vocab)}, {"new_rows": new.tolist()}))
    found = under_trained(s.E[:used])
    expected = np.union1d(np.array(sorted(pad_token_ids(s.files.config)), dtype=np.int64), new)
    found = {k: np.setdiff1d(v, expected) for k, v in found.items()}
    flagged = np.union1d(np.union1d(found["zero"], found["duplicate"]), found["small"])
    if flagged.size == 0:
        return out + [Finding(CHECK, OK, "rows.none", {"rows": used})]
    tied = s.W is None and s.tied_claim is not False
    norms = row_norms(s.E[:used])
    values = {"count": int(flagged.size), "rows": used, "zero": int(found["zero"].size),
              "duplicate": int(found["duplicate"].size), "small": int(found["small"].size),
              "tokens": token_list(flagged, s.vocab), "median_norm": f"{np.median(norms):.3g}"}
    data = {k: v.tolist() for k, v in found.items()}
    return out + [Finding(CHECK, WARNING, "rows.tied" if tied else "rows.untied", values, data)]
