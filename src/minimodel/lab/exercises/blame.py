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

    A clause ``about: dtype`` (or ``shape``) is implicated only by a case that failed with
    that status, and such a case implicates nothing else when such a clause exists. Among the
    rest: clauses with a failed dedicated case first, then clauses all of whose cases failed,
    each group in the statement's order."""
    dedicated = dedicated_kinds(clauses)
    failures = [(f[0], f[1], f[2] if len(f) > 2 else "wrong") for f in failures]
    abouts = {c.get("about") for c in clauses} - {None}
    ranked = []
    for order, clause in enumerate(clauses):
        about = clause.get("about")
        hit = [kind for kind, bad, status in failures if kind in clause["kinds"]
               and (bad or not clause.get("nonfinite"))
               and (status == about if about else status not in abouts)]
        if not hit:
            continue
        own = any(dedicated.get(kind) == clause["id"] for kind in hit)
        whole = set(clause["kinds"]) <= set(hit)
        ranked.append(((not about, not own, not whole, order), clause))
    return [clause for _, clause in sorted(ranked, key=lambda r: r[0])]
