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


# -- every clause a float64 case varies is varied in float32 too, and the float32 allowance is
# float32's own rounding: a function that computes float32 another way fails there.

def _optional_values(ex_id, seed):
    """``{(dtype, parameter): {values passed}}`` over the hidden cases of ``seed``."""
    ex = get_exercise(ex_id)
    seen = {}
    for case in build_cases(ex, seed, examples=0):
        floats = {v.dtype for v in case.args.values()
                  if isinstance(v, np.ndarray) and v.dtype.kind == "f"}
        for dtype in floats:
            for name in ex.defaults:
                value = case.args.get(name, ex.defaults[name])
                seen.setdefault((str(dtype), name), set()).add(
                    "array" if isinstance(value, np.ndarray) else value)
    return ex, seen


@pytest.mark.parametrize("ex_id", ["layer-norm", "cross-entropy"])
def test_each_dtype_sees_every_optional_argument_away_from_its_default(ex_id):
    for seed in range(5):
        ex, seen = _optional_values(ex_id, seed)
        for dtype in ("float64", "float32"):
            for name, default in ex.defaults.items():
                assert seen[(dtype, name)] - {default}, (seed, dtype, name, seen)


def _solution(source, name):
    namespace = {}
    exec(compile(source, "<solution>", "exec"), namespace)  # noqa: S102 - the test's own
    return namespace[name]


# float32 treated apart: eps swapped for float32; ignore_index fixed for float32; the MLM's
# GELU in its erf form for float32 only (float64 inside, cast back: float32's rounding aside,
# only the form differs)
LN_FLOAT32_EPS = """
import numpy as np
def layer_norm(x, weight=None, bias=None, eps=1e-5):
    e = 1e-6 if x.dtype == np.float32 else eps
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + e)
    y = y * weight if weight is not None else y
    return y + bias if bias is not None else y
"""
CE_FLOAT32_INDEX = """
import numpy as np
def cross_entropy(logits, targets, ignore_index=-100):
    skip = -100 if logits.dtype == np.float32 else ignore_index
    keep = (targets != skip) & (targets >= 0)
    z = logits[keep]
    m = z.max(-1, keepdims=True)
    logp = z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))
    return (-logp[np.arange(len(z)), targets[keep]].mean()).astype(logits.dtype)
"""


@pytest.mark.parametrize("ex_id, source, kinds", [
    ("layer-norm", LN_FLOAT32_EPS, {"float32 eps", "float32 default eps"}),
    ("cross-entropy", CE_FLOAT32_INDEX, {"float32 ignore_index"})])
def test_a_function_that_treats_float32_apart_fails_on_every_seed(ex_id, source, kinds):
    ex = get_exercise(ex_id)
    fn = _solution(source, ex.function)
    for seed in range(20):
        bad = set(failing_kinds(ex, fn, seed))
        assert bad and bad <= kinds, (seed, bad)


def _erf_mlm_in_float32(ex_id):
    """The reference with the erf GELU for float32 inputs (float64 inside, cast back)."""
    from math import erf

    import minimodel.models.mlm_reference as mlm

    erf_v = np.vectorize(erf)
    ref = get_exercise(ex_id).reference_function()

    def gelu_erf(x):
        wide = x.astype(np.float64)
        return (0.5 * wide * (1.0 + erf_v(wide / np.sqrt(2.0)))).astype(x.dtype)

    def forward(*args):
        if args[2].dtype != np.float32:
            return ref(*args)
        tanh_gelu = mlm.gelu_tanh
        mlm.gelu_tanh = gelu_erf
        try:
            return ref(*args)
        finally:
            mlm.gelu_tanh = tanh_gelu
    return forward


@pytest.mark.parametrize("ex_id", ["mlm-forward-pass", "mlm-with-tied-output-head"])
def test_the_erf_gelu_in_float32_fails_on_every_seed_and_honest_float32_passes(ex_id):
    """The float32 allowance (rtol_float32 = 4e-6, about 34 float32 epsilons, times the
    output's largest value, plus 16 times the reference's own float32 error) is float32's
    real rounding: the worst honest float32 code (torch, "large scores") reaches about 7
    epsilons of the largest value plus the reference's error over 200 seeds
    (``python tests/lab/honest_float32.py 200``), while the erf GELU is off by more than 60 of
    them on the float32 case of every seed."""
    ex = get_exercise(ex_id)
    assert ex.full_tolerance()["rtol_float32"] <= 4e-6
    fn = _erf_mlm_in_float32(ex_id)
    for seed in range(50):
        assert "float32" in failing_kinds(ex, fn, seed), seed
    assert sweep(ex_id, range(5)) == {}
