"""The judge's tolerance, pinned at its edge for every exercise: an answer off by just under
the tolerance passes, just over it fails. (Loosening any exercise's rtol or atol — say by
100x — makes the "just over" case pass and this test fail.) A float32 case's allowance adds
what float32 costs on it, and is checked to stay within 100x of its rtol/atol."""

import numpy as np
import pytest

from minimodel.lab import quiz
from minimodel.lab.exercises import all_exercises
from minimodel.lab.exercises.judge import build_cases, compare_case, expected_outputs
from minimodel.lab.quiz.numbers import asked_decimals


def _nudged(exact: np.ndarray, like: np.ndarray, allowed: np.ndarray, factor: float) -> np.ndarray:
    """The answer moved away from itself by ``factor`` times the allowed error, elementwise,
    in the dtype the reference returns."""
    step = np.where(exact != 0, factor * allowed, 0.0)  # exact zeros stay (sparse rows)
    if not np.any(allowed):  # exact comparison: one representable step away
        return np.nextafter(like, np.inf) if factor > 1 else like.copy()
    return (exact + step).astype(like.dtype)


@pytest.mark.parametrize("ex", all_exercises(), ids=lambda e: e.id)
def test_just_under_the_tolerance_passes_and_just_over_fails(ex):
    tol = ex.full_tolerance()
    cases = build_cases(ex, seed=0)
    for case, want in zip(cases, expected_outputs(ex, cases)):
        if all(w.size == 0 for w in want.like):
            continue  # nothing to compare (e.g. no masked rows)
        single = any(w.dtype == np.float32 for w in want.like)
        allowed = [np.broadcast_to(want.allowed(i, tol, single), w.shape)
                   for i, w in enumerate(want.like)]
        if single:  # as loose as rtol/atol at least; never 100x looser than rtol * max
            for a, w in zip(allowed, want.exact):
                w = np.abs(w)
                assert np.all(a >= tol["atol_float32"] + tol["rtol_float32"] * w), ex.id
                assert np.all(a <= 100 * (tol["atol_float32"] + tol["rtol_float32"] * w.max())), \
                    (ex.id, case.name)
        # float32 storage rounds the nudge itself: float32 cases stay clear of the edge
        low, high = (0.5, 2.0) if single else (0.9, 1.1)
        under = [_nudged(w, lk, a, low) for w, lk, a in zip(want.exact, want.like, allowed)]
        over = [_nudged(w, lk, a, high) for w, lk, a in zip(want.exact, want.like, allowed)]
        flags = [False] * len(want.like)
        assert compare_case(ex, want, under, flags, "en").status == "passed", (ex.id, case.name)
        status, message, *_ = compare_case(ex, want, over, flags, "en")
        assert status == "wrong", (ex.id, case.name, message)


NUMERIC = [q for qz in quiz.load_all() for q in qz.questions if q.kind == "numeric"]


@pytest.mark.parametrize("question", NUMERIC, ids=lambda q: q.id)
def test_a_quiz_tolerance_agrees_with_the_decimals_its_prompt_asks_for(question):
    """"Give 3 decimals" allows one unit in the third decimal, whatever the YAML's tolerance
    (0.01 once accepted 6.245 for 6.238); other questions keep their own tolerance."""
    decimals = asked_decimals(question.answer, question.prompt)
    tolerance = question.answer["tolerance"] if decimals is None else min(
        question.answer["tolerance"], 10.0 ** -decimals)
    value = question.answer["value"]
    places = decimals if decimals is not None else 6
    for sign in (1, -1):
        inside = f"{value + sign * 0.9 * tolerance:.{places + 1}f}" if tolerance else str(value)
        assert quiz.is_correct(question, float(inside), "en"), (question.id, inside)
        outside = value + sign * (1.1 * tolerance if tolerance else 1.0)
        # two more places than asked: a half-unit tolerance (0.005 for "two decimals") is not
        # rounded back onto its own edge (0.3145 -> "0.315", which the edge accepts)
        assert not quiz.is_correct(question, float(f"{outside:.{places + 2}f}"), "en"), question.id
    if decimals is not None:
        assert tolerance <= 10.0 ** -decimals
