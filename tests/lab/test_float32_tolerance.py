"""Honest float32 code is never refused, on any seed: the answer is computed in float64 from
the case's own float32 inputs, and the allowance grows with what float32 costs on the case
(the output's magnitude, the reference's own float32 error). A softmax that overflows still fails,
and only an inf/NaN is blamed on "the softmax is computed stably".

The full sweep (200 seeds, every variant) is ``python tests/lab/honest_float32.py 200``."""

import numpy as np
import pytest

from honest_float32 import VARIANTS, sweep
from minimodel.lab.exercises import get_exercise
from minimodel.lab.exercises.clauses import failing_kinds
from minimodel.lab.exercises.judge import (_case_entry, build_cases, compare_case,
                                           expected_outputs)

# 971876: hidden case 7 ("float32, large scores") refused honest code (error 4.66e-4 against
# an allowance of 3.42e-4 around the float32 reference); 43 and 80 are the seeds of 0..199
# where honest variants come closest to the edge.
SEEDS = [971876, 43, 80, *range(12)]


@pytest.mark.parametrize("ex_id", sorted(VARIANTS))
def test_honest_float32_variants_pass_every_case(ex_id):
    assert sweep(ex_id, SEEDS) == {}


def test_the_reported_seed_is_no_longer_refused_and_the_float32_reference_passes():
    ex = get_exercise("mlm-forward-pass")
    for name, fn in VARIANTS[ex.id].items():
        assert failing_kinds(ex, fn, 971876) == [], name
    assert failing_kinds(ex, ex.reference_function(), 971876) == []


def _large_scores(ex_id, seed=971876):
    ex = get_exercise(ex_id)
    cases = build_cases(ex, seed, examples=0)
    case = next(c for c in cases if c.kind == "large scores")
    return ex, case, expected_outputs(ex, [case])[0]


@pytest.mark.parametrize("ex_id", ["mlm-forward-pass", "mlm-with-tied-output-head"])
def test_a_nan_is_blamed_on_the_stable_softmax_and_a_close_miss_is_not(ex_id):
    ex, case, want = _large_scores(ex_id)
    assert want.exact[0].dtype == np.float64 and want.like[0].dtype == np.float32
    allowed = want.allowed(0, ex.full_tolerance(), True)
    close_miss = (want.exact[0] + 3 * allowed).astype(np.float32)  # finite, a bit too far
    verdict = compare_case(ex, want, [close_miss], [False], "en", hidden=True)
    assert verdict.status == "wrong" and not verdict.nonfinite
    entry = _case_entry(ex, case, verdict.status, verdict.message, "en", verdict.nonfinite)
    assert "stably" not in entry["message"] and entry["clauses"] == []

    nan = want.like[0].copy()
    nan[0, 0] = np.nan
    verdict = compare_case(ex, want, [nan], [False], "en", hidden=True)
    assert verdict.status == "wrong" and verdict.nonfinite
    entry = _case_entry(ex, case, verdict.status, verdict.message, "es", verdict.nonfinite)
    assert entry["clauses"] == ["la softmax se calcula de forma estable (puntuaciones de "
                                "atención grandes no dan inf ni NaN)"]


@pytest.mark.parametrize("ex_id", ["mlm-forward-pass", "mlm-with-tied-output-head"])
def test_the_unstable_softmax_still_fails_its_case_on_every_seed(ex_id):
    ex = get_exercise(ex_id)
    wrong = next(w for w in ex.wrong if w["file"] == "unstable_softmax.diff")
    namespace = {}
    exec(compile(ex.wrong_source(wrong), "<unstable>", "exec"), namespace)  # noqa: S102
    fn = namespace[ex.function]
    for seed in SEEDS:
        assert "large scores" in failing_kinds(ex, fn, seed), seed


@pytest.mark.parametrize("lang, words", [("en", "at index"), ("es", "en el índice")])
def test_a_wrong_scalar_names_no_index_and_an_array_names_its_position(lang, words):
    """A 0-d result once read "largest error ... at index []"."""
    ex = get_exercise("cross-entropy")
    case = build_cases(ex, 3, examples=0)[0]
    want = expected_outputs(ex, [case])[0]
    assert want.exact[0].ndim == 0
    off = (want.exact[0] + 1.0).astype(want.like[0].dtype)
    message = compare_case(ex, want, [off], [False], lang, hidden=True).message
    assert words not in message and "[]" not in message
    ex = get_exercise("mlm-forward-pass")
    case = next(c for c in build_cases(ex, 3, examples=0) if c.kind == "float32")
    want = expected_outputs(ex, [case])[0]
    off = want.like[0].copy()   # (4, 28) here
    off[1, 2] += 1.0
    message = compare_case(ex, want, [off], [False], lang, hidden=True).message
    assert f"{words} [1, 2]" in message
