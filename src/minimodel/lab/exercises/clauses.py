"""Every clause of every statement is tested, on every seed.

An exercise lists its clauses (``exercise.yaml``: id, text, the case kinds that test it, and a
known-wrong solution that violates that clause). :func:`clause_problems` checks, for many
seeds, that

* the clause's kinds exist in the exercise's case generator (so hidden cases test it);
* the reference passes every case;
* the clause's wrong solution fails on **every** seed, and fails on a case of the clause's
  own kinds — not by luck elsewhere (a cross-entropy with one global max shift used to pass
  about 4 % of seeds).

The solutions here are shipped content, run in-process with the judge's own comparison
(``judge.compare_case``); the sandboxed judge runs each of them once in
``validate.validate_all``.
"""

from __future__ import annotations

import copy
import io
import contextlib
import warnings
from typing import Any, Callable

import numpy as np

from minimodel.lab.exercises.cases import Case, generator_kinds
from minimodel.lab.exercises.registry import Exercise

SWEEP_SEEDS = range(40)


def _function(ex: Exercise, source: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {"__name__": f"_mm_clause_{ex.id.replace('-', '_')}"}
    exec(compile(source, f"<{ex.id}>", "exec"), namespace)  # noqa: S102 - shipped content
    return namespace[ex.function]


def _outputs(ex: Exercise, fn: Callable[..., Any], case: Case):
    """(outputs, python_scalar flags), or an exception."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"), \
                contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            out = case.call(fn, copy.deepcopy(case.args))
    except Exception as exc:  # noqa: BLE001 - a wrong solution may raise anything
        return exc
    outs = list(out) if len(ex.outputs) > 1 and isinstance(out, (tuple, list)) else [out]
    return [np.asarray(o) for o in outs], [isinstance(o, (int, float)) for o in outs]


def failing_kinds(ex: Exercise, fn: Callable[..., Any], seed: int) -> list[str]:
    """Kinds of the hidden cases on which ``fn`` does not pass (judge semantics)."""
    # Imported here: judge imports this module's neighbours, and validation alone needs it.
    from minimodel.lab.exercises.judge import build_cases, compare_case, expected_for

    reference = ex.reference_function()
    bad = []
    for case in build_cases(ex, seed, examples=0):
        got = _outputs(ex, fn, case)
        if isinstance(got, Exception):
            bad.append(case.kind)
            continue
        if compare_case(ex, expected_for(ex, reference, case.args), got[0], got[1],
                        "en").status != "passed":
            bad.append(case.kind)
    return bad


def clause_problems(ex: Exercise, seeds=SWEEP_SEEDS) -> list[str]:
    """What is wrong with ``ex``'s clauses (an empty list when every clause holds)."""
    problems = []
    kinds = set(generator_kinds(ex.cases["generator"]))
    wrong_files = {w["file"]: w for w in ex.wrong}
    if not ex.clauses:
        return [f"{ex.id}: no clauses listed"]
    reference = _function(ex, ex.reference_path.read_text(encoding="utf-8"))
    for seed in seeds[:5]:
        if failing_kinds(ex, reference, seed):
            problems.append(f"{ex.id}: the reference fails on seed {seed}")
    for clause in ex.clauses:
        where = f"{ex.id}: clause {clause['id']!r}"
        missing = sorted(set(clause["kinds"]) - kinds)
        if missing:
            problems.append(f"{where}: its kinds {missing} are not cases of the generator "
                            f"{ex.cases['generator']!r} (known: {sorted(kinds)})")
            continue
        entry = wrong_files.get(clause["wrong"])
        if entry is None:
            problems.append(f"{where}: its wrong solution {clause['wrong']!r} is not listed "
                            "under wrong:")
            continue
        fn = _function(ex, ex.wrong_source(entry))
        for seed in seeds:
            bad = failing_kinds(ex, fn, seed)
            if not set(bad) & set(clause["kinds"]):
                problems.append(f"{where}: {clause['wrong']} is accepted on the clause's cases "
                                f"{clause['kinds']} with seed {seed} (it failed only {bad})")
                break
    return problems
