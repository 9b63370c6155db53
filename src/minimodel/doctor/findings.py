"""What a check reports: one :class:`Finding` per line of the doctor's table.

A finding holds a status and a text key with its values, not sentences: the sentences (what
was found, why it matters, the fix) are written once per language in :mod:`.texts` and filled
in when the report is shown, so ``--lang es`` changes the words and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minimodel.doctor.memo import remembered

OK, INFO, WARNING, PROBLEM, SKIPPED = "ok", "info", "warning", "problem", "skipped"
STATUSES = (OK, INFO, WARNING, PROBLEM, SKIPPED)


@dataclass
class Finding:
    """One line of the report.

    Attributes:
        check: which check made it ("tie", "sizes", "rows", "reachability", "optimizer",
            "ledger").
        status: ok, info (a fact worth knowing, nothing wrong), warning, problem, or skipped
            (the check could not run here).
        key: the entry of message ``doctor.<key>.*`` of :mod:`minimodel.messages` that words it.
        values: what fills the text's ``{placeholders}``.
        data: extra facts for ``--json`` (lists of ids, exact figures).
    """

    check: str
    status: str
    key: str
    values: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {STATUSES}")


@remembered
def row_norms(a: np.ndarray) -> np.ndarray:
    """|a_i| for every row of ``a`` (V, d), without a widened copy of ``a`` (V,)."""
    return np.sqrt(np.einsum("ij,ij->i", a, a, dtype=np.float64))


def token_list(ids: Any, vocab: Any, limit: int = 8) -> str:
    """``12 'ĠThe', 40 '<pad>' ... (+3 more)``: ids with their token text, for a report line."""
    ids = [int(i) for i in np.asarray(ids).ravel()]
    shown = [f"{i} {vocab.quoted(i)}" if vocab is not None and i in vocab.tokens else str(i)
             for i in ids[:limit]]
    more = f" (+{len(ids) - limit} more)" if len(ids) > limit else ""
    return ", ".join(shown) + more
