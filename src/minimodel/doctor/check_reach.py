"""The unreachable-token check as a report line (the method is in :mod:`.reachability`)."""

from __future__ import annotations

import numpy as np

from minimodel.doctor.check_rows import under_trained
from minimodel.doctor.findings import OK, PROBLEM, WARNING, Finding, token_list
from minimodel.doctor.reachability import find_unreachable
from minimodel.doctor.subject import Subject

CHECK = "reachability"


def check_reachability(s: Subject) -> list[Finding]:
    W = s.W if s.W is not None else s.E  # (V, d): the rows the head scores with
    flagged = under_trained(W)
    extra = np.concatenate([flagged["zero"], flagged["duplicate"], flagged["small"]])
    r = find_unreachable(W, extra)
    matrix = s.roles.head_name if s.W is not None else s.roles.embedding
    values = {"checked": r.checked, "rows": W.shape[0], "matrix": matrix,
              "method": r.method, "reachable": r.reachable, "undecided": len(r.undecided),
              "lp": "" if r.lp_available else " (scipy is not installed: no LP)"}
    data = {"method": r.method, "checked": r.checked, "reachable": r.reachable,
            "unreachable": {str(i): mix for i, mix in r.unreachable.items()},
            "undecided": r.undecided, "lp_available": r.lp_available,
            "bias_ignored": s.roles.head_bias}
    out = []
    if r.unreachable:
        first = next(iter(r.unreachable))
        mix = " + ".join(f"{w:.2f}·{j} {s.vocab.text(j)!r}" if s.vocab else f"{w:.2f}·{j}"
                         for j, w in r.unreachable[first])
        out.append(Finding(CHECK, PROBLEM, "reach.unreachable",
                           {**values, "count": len(r.unreachable),
                            "tokens": token_list(list(r.unreachable), s.vocab),
                            "example": first, "mix": mix}, data))
    if r.undecided:
        out.append(Finding(CHECK, WARNING, "reach.undecided",
                           {**values, "tokens": token_list(r.undecided, s.vocab)}, data))
    if not out:
        out.append(Finding(CHECK, OK, "reach.all", values, data))
    return out
