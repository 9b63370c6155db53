"""The judge repeats one hidden case with new values at the same sizes, in the same process:
a function whose result depends only on its inputs' shapes (a cache keyed by shape and dtype)
fails there, on every exercise and every seed."""

from __future__ import annotations

import numpy as np
import pytest

from minimodel.lab.exercises import judge
from minimodel.lab.exercises.cases import REPEAT_KIND
from minimodel.lab.exercises.judge import check_solution
from minimodel.lab.exercises.registry import all_exercises, get_exercise

SEEDS = range(12)

# attack 9's files: each answers from a cache keyed by the inputs' shapes and dtypes
GELU_CACHE = '''import math
import numpy as np

_cache = {}


def gelu(x):
    key = (x.shape, x.dtype.str)
    if key not in _cache:
        c = x.dtype.type(math.sqrt(2 / math.pi))
        _cache[key] = x.dtype.type(0.5) * x * (1 + np.tanh(c * (x + x.dtype.type(0.044715) * x ** 3)))
    return _cache[key]
'''
CE_CACHE = '''import numpy as np

_cache = {}


def cross_entropy(logits, targets, ignore_index=-100):
    logits, targets = np.asarray(logits), np.asarray(targets)
    key = (logits.shape, logits.dtype.str, targets.shape, ignore_index)
    if key not in _cache:
        z = logits - logits.max(axis=-1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=-1))
        keep = targets != ignore_index
        t = np.where(keep, targets, 0)
        pick = np.take_along_axis(z, t[..., None], axis=-1)[..., 0]
        _cache[key] = np.asarray(((lse - pick) * keep).sum() / keep.sum(), dtype=logits.dtype)
    return _cache[key]
'''


def _layout(value):
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str)
    return (type(value).__name__,)


def _cached_by_shape(ex):
    """The reference behind a cache keyed by every argument's shape and dtype (scalars by
    value): the first answer for a layout is returned for every later call with it."""
    reference, cache = ex.reference_function(), {}

    def fn(*args):
        key = tuple((_layout(a), None if isinstance(a, np.ndarray) else a) for a in args)
        if key not in cache:
            cache[key] = reference(*args)
        return cache[key]
    return fn


def _outputs(ex, out):
    outs = list(out) if len(ex.outputs) > 1 else [out]
    return [np.asarray(o) for o in outs]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # a case holds an inf or NaN on purpose
@pytest.mark.parametrize("ex", all_exercises(), ids=lambda ex: ex.id)
def test_every_exercise_repeats_a_hidden_case_that_a_shape_keyed_cache_fails(ex):
    """On every seed: one repeat, last, hidden, of a hidden case, with its arguments' shapes
    and dtypes and other values; the reference passes it and the cached reference does not."""
    reference = ex.reference_function()
    for seed in SEEDS:
        cases = judge.build_cases(ex, seed)
        expected = judge.expected_outputs(ex, cases)
        cases, expected = judge.with_repeat(ex, cases, expected, seed)
        repeat = cases[-1]
        assert repeat.kind == REPEAT_KIND and repeat.hidden, (ex.id, seed)
        assert repeat.name == f"hidden {sum(c.hidden for c in cases)}"
        original = next(c for c in cases if c.name == repeat.repeats)
        assert original.hidden and list(original.args) == list(repeat.args)
        assert [_layout(v) for v in original.args.values()] == \
            [_layout(v) for v in repeat.args.values()], (ex.id, seed)
        assert any(isinstance(v, np.ndarray) and not np.array_equal(v, original.args[k],
                                                                    equal_nan=True)
                   for k, v in repeat.args.items()), (ex.id, seed)
        ok = judge.compare_case(ex, expected[-1], _outputs(ex, reference(*repeat.args.values())),
                                [False] * len(ex.outputs), "en")
        assert ok.status == "passed", (ex.id, seed, ok.message)
        cached, got = _cached_by_shape(ex), None
        for case in cases:  # in order, as the judge's one process runs them
            got = cached(*case.args.values())
        bad = judge.compare_case(ex, expected[-1], _outputs(ex, got),
                                 [False] * len(ex.outputs), "en")
        assert bad.status != "passed", (ex.id, seed)


@pytest.mark.parametrize("exercise, source, lang", [
    ("gelu-tanh", GELU_CACHE, "en"), ("cross-entropy", CE_CACHE, "es")])
def test_a_cache_keyed_by_shape_fails_the_repeat_and_is_told_why(exercise, source, lang):
    ex = get_exercise(exercise, lang)
    # a seed where no two declared cases share shapes and dtypes (on some seeds two do, and
    # the cache then fails the later one already)
    result = check_solution(ex, source=source, lang=lang, seed=1)
    assert result["status"] == "wrong", result["message"]
    failed = [c for c in result["cases"] if c["status"] != "passed"]
    assert [c["kind"] for c in failed] == [REPEAT_KIND]
    assert failed[0]["name"] == result["cases"][-1]["name"]
    assert result["blame"][0]["id"] == "values-not-shapes"
    words = {"en": "not only on their shapes", "es": "no solo de sus formas"}[lang]
    assert words in result["message"] and words in failed[0]["message"]


def test_the_repeat_of_a_case_that_failed_points_at_that_case():
    """A wrong formula fails the repeat too: it is not blamed on the values, and says which
    case to look at first."""
    ex = get_exercise("gelu-tanh")
    erf = ("import math\nimport numpy as np\n\ndef gelu(x):\n"
           "    return x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2))).astype(x.dtype)\n")
    result = check_solution(ex, source=erf, seed=4)
    repeat = result["cases"][-1]
    assert repeat["kind"] == REPEAT_KIND and repeat["status"] == "wrong"
    original = next(c for c in result["cases"] if c["name"] == repeat["repeats"])
    assert original["status"] == "wrong"
    assert "look first at the clause hidden" in repeat["message"]
    assert "values-not-shapes" not in [c["id"] for c in result["blame"]]
