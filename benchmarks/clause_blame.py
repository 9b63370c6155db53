"""How often the judge's first named clause is the mistake a known-wrong solution makes.

Every known-wrong solution of every exercise that breaks a clause of the statement declares
it (``clause:`` on its ``wrong:`` entry, or the clause that lists it as its ``wrong``). For
each one and each seed, the hidden cases are run with the judge's own comparison, in this
process (shipped content only), and the clauses the failures implicate are ordered as the
judge orders them (:func:`minimodel.lab.exercises.blame.blamed_clauses`). The benchmark prints
the rate at which the FIRST clause named is the declared one (target 100 %, at least 90 %),
and every miss.

    python benchmarks/clause_blame.py              # 5 seeds
    python benchmarks/clause_blame.py --seeds 20 --json blame.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.path.insert(0, SRC)

import numpy as np  # noqa: E402

from minimodel.lab.exercises import all_exercises  # noqa: E402
from minimodel.lab.exercises.blame import blamed_clauses  # noqa: E402
from minimodel.lab.exercises.clauses import _function, _outputs  # noqa: E402
from minimodel.lab.exercises.judge import build_cases, compare_case, expected_for  # noqa: E402


def declared_clause(ex, entry) -> str | None:
    """The clause a wrong solution breaks: its own ``clause:``, or the clause naming it."""
    if entry.get("clause"):
        return entry["clause"]
    return next((c["id"] for c in ex.clauses if c["wrong"] == entry["file"]), None)


def first_blamed(ex, fn, reference, seed: int) -> list[str]:
    """Clause ids the failures of ``fn`` on ``seed``'s hidden cases implicate, in order."""
    failures = []
    for case in build_cases(ex, seed, examples=0):
        got = _outputs(ex, fn, case)
        if isinstance(got, Exception):
            failures.append((case.kind, True, "error"))  # errors may come from an overflow
            continue
        with np.errstate(all="ignore"):
            verdict = compare_case(ex, expected_for(ex, reference, case.args), got[0], got[1],
                                   "en", hidden=True)
        if verdict.status != "passed":
            failures.append((case.kind, verdict.nonfinite, verdict.about or verdict.status))
    return [c["id"] for c in blamed_clauses(ex.clauses, failures)]


def run(seeds: int) -> dict:
    rows, misses = [], []
    for ex in all_exercises():
        reference = ex.reference_function()
        for entry in ex.wrong:
            clause = declared_clause(ex, entry)
            if clause is None:
                continue  # not a clause mistake (a forbidden call, a loop that never ends)
            fn = _function(ex, ex.wrong_source(entry))
            for seed in range(seeds):
                blamed = first_blamed(ex, fn, reference, seed)
                hit = bool(blamed) and blamed[0] == clause
                rows.append(hit)
                if not hit:
                    misses.append({"exercise": ex.id, "wrong": entry["file"], "seed": seed,
                                   "breaks": clause, "named": blamed[:3]})
    rate = sum(rows) / len(rows) if rows else 0.0
    return {"runs": len(rows), "first_clause_right": sum(rows), "rate": rate,
            "misses": misses}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per wrong solution")
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args(argv)
    result = run(args.seeds)
    seen = set()
    for miss in result["misses"]:
        key = (miss["exercise"], miss["wrong"])
        if key not in seen:
            seen.add(key)
            print(f"miss: {miss['exercise']}/{miss['wrong']} breaks {miss['breaks']!r}, "
                  f"first named {miss['named'][:1]} (seed {miss['seed']})")
    print(f"clause blame: the first clause named is the one broken in "
          f"{result['first_clause_right']} of {result['runs']} runs "
          f"({100 * result['rate']:.1f} %; target 100 %, at least 90 %)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
    return 0 if result["rate"] >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
