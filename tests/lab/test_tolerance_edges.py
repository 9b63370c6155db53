"""The judge's tolerance, pinned at its edge for every exercise: an answer off by just under
the tolerance passes, just over it fails. (Loosening any exercise's rtol or atol — say by
100x — makes the "just over" case pass and this test fail.)"""

import numpy as np
import pytest

from minimodel.lab import quiz
from minimodel.lab.exercises import all_exercises
from minimodel.lab.exercises.judge import build_cases, compare_case, expected_outputs
from minimodel.lab.quiz.numbers import asked_decimals


def _nudged(want: np.ndarray, factor: float, rtol: float, atol: float) -> np.ndarray:
    """``want`` moved away from itself by ``factor`` times the tolerance, elementwise."""
    w = want.astype(np.float64)
    step = np.where(w != 0, factor * (atol + rtol * np.abs(w)), 0.0)  # exact zeros stay (sparse rows)
    if rtol == 0 and atol == 0:  # exact comparison: one representable step away
        return np.nextafter(want, np.inf) if factor > 1 else want.copy()
    return (w + step).astype(want.dtype)


@pytest.mark.parametrize("ex", all_exercises(), ids=lambda e: e.id)
def test_just_under_the_tolerance_passes_and_just_over_fails(ex):
    tol = ex.full_tolerance()
    cases = build_cases(ex, seed=0)
    expected = expected_outputs(ex, cases)
    for case, want in zip(cases, expected):
        single = any(w.dtype == np.float32 for w in want)
        rtol = tol["rtol_float32"] if single else tol["rtol"]
        atol = tol["atol_float32"] if single else tol["atol"]
        if all(w.size == 0 for w in want):
            continue  # nothing to compare (e.g. no masked rows)
        under = [_nudged(w, 0.9, rtol, atol) for w in want]
        over = [_nudged(w, 1.1, rtol, atol) for w in want]
        flags = [False] * len(want)
        assert compare_case(ex, want, under, flags, "en")[0] == "passed", (ex.id, case.name)
        status, message = compare_case(ex, want, over, flags, "en")
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
        assert quiz.is_correct(question, float(inside)), (question.id, inside)
        outside = value + sign * (1.1 * tolerance if tolerance else 1.0)
        assert not quiz.is_correct(question, float(f"{outside:.{places + 1}f}")), question.id
    if decimals is not None:
        assert tolerance <= 10.0 ** -decimals
