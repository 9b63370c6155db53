"""The unreachable-token check as a report line (the method is in :mod:`.reachability`)."""

from __future__ import annotations

import numpy as np

from minimodel.doctor.check_rows import new_rows_at_mean, under_trained
from minimodel.doctor.findings import OK, PROBLEM, WARNING, Finding, token_list
from minimodel.doctor.names import pad_token_ids
from minimodel.doctor.reachability import MAX_LP, find_unreachable
from minimodel.doctor.subject import Subject
from minimodel.doctor.texts import Phrase

CHECK = "reachability"


def check_reachability(s: Subject) -> list[Finding]:
    W = s.W if s.W is not None else s.E  # (V, d): the rows the head scores with
    flagged = under_trained(W)
    extra = np.concatenate([flagged["zero"], flagged["duplicate"], flagged["small"]])
    bias = _head_bias(s, W.shape[0])
    r = find_unreachable(W, extra, bias)
    # The padding id and the padding rows beyond the tokenizer are never meant to be
    # predicted; their rows (often zero) may well sit inside the hull. New rows at the mean
    # (a resize before fine-tuning) sit inside it by construction.
    not_tokens = set(pad_token_ids(s.files.config))
    if s.vocab is not None:
        not_tokens |= set(range(s.vocab.size, W.shape[0]))
    not_tokens |= set(new_rows_at_mean(W).tolist())
    expected = {i: r.unreachable.pop(i) for i in sorted(not_tokens) if i in r.unreachable}
    r.undecided = [i for i in r.undecided if i not in not_tokens]
    never_tried = [i for i in r.never_tried if i not in not_tokens]
    matrix = s.roles.head_name if s.W is not None else s.roles.embedding_label
    values = {"checked": r.checked, "rows": W.shape[0], "matrix": matrix,
              "method": Phrase(r.method), "reachable": r.reachable,
              "undecided": len(r.undecided), "lp": Phrase("" if r.lp_available else "no scipy")}
    data = {"method": r.method, "checked": r.checked, "reachable": r.reachable,
            "unreachable": {str(i): mix for i, mix in r.unreachable.items()},
            "undecided": r.undecided, "lp_available": r.lp_available,
            "bias": s.roles.head_bias if bias is not None else None,
            "padding_id_unreachable": sorted(expected)}
    out = []
    if r.unreachable:
        first = next(iter(r.unreachable))
        mix = " + ".join(f"{w:.2f}·{j} {s.vocab.quoted(j)}" if s.vocab else f"{w:.2f}·{j}"
                         for j, w in r.unreachable[first])
        out.append(Finding(CHECK, PROBLEM, "reach.unreachable",
                           {**values, "count": len(r.unreachable),
                            "tokens": token_list(list(r.unreachable), s.vocab),
                            "example": first, "mix": mix}, data))
    if r.undecided:
        key = ("reach.undecided_no_scipy" if not r.lp_available
               else "reach.undecided_cut" if never_tried else "reach.undecided")
        out.append(Finding(CHECK, WARNING, key,
                           {**values, "tokens": token_list(r.undecided, s.vocab),
                            "skipped": len(never_tried), "limit": MAX_LP}, data))
    if not out:
        key = "reach.all_but_padding" if expected else "reach.all"
        out.append(Finding(CHECK, OK, key, {**values, "padding": token_list(sorted(expected),
                                                                             s.vocab)}, data))
    return out


def _head_bias(s: Subject, rows: int) -> np.ndarray | None:
    """The head's bias (V,) when the model has one of the head's length, else None."""
    if s.roles.head_bias is None:
        return None
    b = np.asarray(s.files.read(s.roles.head_bias), dtype=np.float64).ravel()
    return b if b.shape == (rows,) and np.any(b) else None
