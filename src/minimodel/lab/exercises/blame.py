"""Which clause of the statement a failure points at first.

Every hidden case has a *kind*; every clause of the statement lists the kinds that test it.
A kind listed by exactly one clause is that clause's *dedicated* case: the case holds every
other clause at its simplest, so when it fails, that clause is the likeliest mistake. Kinds
listed by several clauses, or by none, are *general* cases (float64, float32, ...).

:func:`blamed_clauses` orders the clauses a failure implicates: first those whose dedicated
cases failed, in the statement's order (an exercise lists its clauses from the most basic to
the most specific, so a basic mistake that also breaks a later clause's case is named first);
then those all of whose cases failed; then the others. A clause marked ``nonfinite`` (a
stable softmax) is implicated only when the failing output was not finite; a clause ``about``
a dtype or a shape only by a case that failed with that status (a dtype failure is precise). ``benchmarks/clause_blame.py``
measures how often the first clause named is the one a known-wrong solution breaks.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable


def dedicated_kinds(clauses: list[dict[str, Any]]) -> dict[str, str]:
    """kind -> id of the one clause that lists it (kinds listed by several are general)."""
    counts = Counter(kind for clause in clauses for kind in set(clause["kinds"]))
    return {kind: clause["id"] for clause in clauses for kind in clause["kinds"]
            if counts[kind] == 1}


def case_clauses(clauses: list[dict[str, Any]], kind: str, nonfinite: bool = True
                 ) -> tuple[list[dict[str, Any]], bool]:
    """(the clauses a case of ``kind`` tests, whether the case is dedicated to one)."""
    dedicated = dedicated_kinds(clauses)
    tested = [c for c in clauses if kind in c["kinds"] and (nonfinite or not c.get("nonfinite"))]
    return tested, kind in dedicated


def blamed_clauses(clauses: list[dict[str, Any]],
                   failures: Iterable[tuple[str, bool] | tuple[str, bool, str]]
                   ) -> list[dict[str, Any]]:
    """The clauses implicated by ``failures`` (``(kind, nonfinite[, status])`` of each failed
    hidden case), the likeliest first (see the module docstring).

    The third item is how the case failed: its status, or a finer kind (``sparse``: non-zero
    rows that must be zero). A clause ``about: dtype`` (``shape``, ``sparse``) is implicated
    only by a case that failed that way, and such a case implicates only those clauses when
    one of them tests its kind. Among the
    rest: clauses with a failed dedicated case first, then clauses all of whose cases failed,
    each group in the statement's order."""
    dedicated = dedicated_kinds(clauses)
    hits: dict[str, list[str]] = {c["id"]: [] for c in clauses}
    for failure in failures:
        kind, bad, how = failure[0], failure[1], failure[2] if len(failure) > 2 else "wrong"
        tested = [c for c in clauses if kind in c["kinds"] and (bad or not c.get("nonfinite"))]
        precise = [c for c in tested if c.get("about") == how]
        for clause in precise or [c for c in tested if not c.get("about")]:
            hits[clause["id"]].append(kind)
    ranked = []
    for order, clause in enumerate(clauses):
        hit = hits[clause["id"]]
        if not hit:
            continue
        own = any(dedicated.get(kind) == clause["id"] for kind in hit)
        whole = set(clause["kinds"]) <= set(hit)
        ranked.append(((not clause.get("about"), not own, not whole, order), clause))
    return [clause for _, clause in sorted(ranked, key=lambda r: r[0])]
