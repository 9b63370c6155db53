"""Exercise content: every reference passes its judge, every known-wrong solution is rejected
with its declared status, and the text exists in English and Spanish."""

from __future__ import annotations

import dataclasses
import difflib
import shutil
import sys
import types
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
try:
    import minimodel  # noqa: F401
except ImportError:  # package __init__ mid-rewrite by others: the lab needs only numpy
    _stub = types.ModuleType("minimodel")
    _stub.__path__ = [str(SRC / "minimodel")]
    _stub.__version__ = "0.0.0"
    sys.modules["minimodel"] = _stub

from minimodel.lab.exercises import (all_exercises, check_solution, get_exercise,  # noqa: E402
                                     list_exercises, validate_all)
from minimodel.lab.patching import PatchError  # noqa: E402

REQUIRED = {"embedding-lookup", "embedding-onehot-matmul", "tied-head-logits", "cross-entropy",
            "layer-norm", "gelu-tanh", "multi-head-self-attention", "mlm-forward-pass",
            "mlm-with-tied-output-head", "cbow-step", "effective-rank"}


def test_required_exercises_exist_with_two_wrong_solutions():
    ids = [e["id"] for e in list_exercises()]
    assert REQUIRED <= set(ids) and len(ids) == len(set(ids))
    for ex in all_exercises():
        assert len(ex.wrong) >= 2, ex.id
        assert ex.hints["en"] and len(ex.hints["en"]) == len(ex.hints["es"])


def test_declared_wrong_kinds_cover_the_classic_mistakes():
    expects = {(e.id, w["file"]): w["expect"] for e in all_exercises() for w in e.wrong}
    kinds = set(expects.values())
    assert {"wrong", "shape", "dtype", "forbidden", "timeout"} <= kinds
    assert expects[("mlm-with-tied-output-head", "untied_head.diff")] == "wrong"
    assert expects[("cbow-step", "fancy_index_add.diff")] == "wrong"
    assert expects[("multi-head-self-attention", "torch_sdpa.py")] == "forbidden"


def test_mlm_exercises_use_the_library_reference_and_no_copy():
    from minimodel.models import mlm_reference

    for ex_id, function in (("mlm-forward-pass", "mlm_forward"),
                            ("mlm-with-tied-output-head", "mlm_forward_tied")):
        ex = get_exercise(ex_id)
        assert ex.reference_path == Path(mlm_reference.__file__).resolve()
        assert ex.reference_function() is getattr(mlm_reference, function)
        assert not (ex.folder / "reference.py").exists()


def _changed_lines(a: str, b: str) -> int:
    return sum(1 for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="")
               if line[:1] in "+-" and not line.startswith(("---", "+++")))


def test_wrong_diffs_are_the_reference_with_one_small_change():
    diffs = [(ex, w) for ex in all_exercises() for w in ex.wrong if w["file"].endswith(".diff")]
    assert len(diffs) >= 16
    for ex, w in diffs:
        reference = ex.reference_path.read_text(encoding="utf-8")
        source = ex.wrong_source(w)
        assert 1 <= _changed_lines(reference, source) <= 6, (ex.id, w["file"])
        compile(source, w["file"], "exec")  # still a Python file
        first = (ex.folder / "wrong" / w["file"]).read_text().splitlines()[0]
        assert first.startswith("Wrong"), (ex.id, w["file"])  # says what is wrong, then the diff


def test_a_wrong_diff_judged_fails_for_its_reason(tmp_path):
    ex = get_exercise("mlm-forward-pass")
    entry = next(w for w in ex.wrong if w["file"] == "causal_mask.diff")
    result = check_solution(ex, "wrong/causal_mask.diff", source=ex.wrong_source(entry), seed=5)
    assert result["status"] == "wrong" and result["reason"] == "wrong"
    assert any("largest error" in c["message"] for c in result["cases"])
    entry = next(w for w in ex.wrong if w["file"] == "full_logits.diff")
    result = check_solution(ex, "wrong/full_logits.diff", source=ex.wrong_source(entry), seed=5)
    assert result["status"] == "wrong" and result["reason"] == "shape"


def test_a_diff_that_no_longer_fits_is_reported_with_both_files(tmp_path):
    ex = get_exercise("multi-head-self-attention")
    folder = tmp_path / ex.id
    shutil.copytree(ex.folder, folder)
    reference = folder / "reference.py"
    reference.write_text(reference.read_text().replace("math.sqrt(dh)", "dh ** 0.5"))
    moved = dataclasses.replace(ex, folder=folder)
    entry = next(w for w in moved.wrong if w["file"] == "no_scale.diff")
    with pytest.raises(PatchError, match=r"no_scale\.diff does not apply to .*reference\.py"):
        moved.wrong_source(entry)


def test_validate_all_content_through_the_real_judge():
    """Runs every reference, alternative, stub and wrong file in the subprocess judge."""
    assert validate_all(seed=1234) == []


# --- counted-bigram-loss: vocab_size is tested, not only the ids -----------------------------

WIDTH_FROM_IDS = '''import numpy as np


def counted_bigram_loss(train_ids, val_ids, vocab_size):
    V = int(max(train_ids.max(), val_ids.max())) + 1  # wrong: the ids seen, not vocab_size
    counts = np.ones((V, V))
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1)
    p = counts / counts.sum(axis=1, keepdims=True)
    return float(-np.log(p[val_ids[:-1], val_ids[1:]]).mean())
'''


def test_bigram_cases_hold_the_top_id_except_where_vocab_size_exceeds_every_id():
    from minimodel.lab.exercises.cases import make_cases

    ex = get_exercise("counted-bigram-loss")
    unused = {"top ids unused", "last id unused"}
    for seed in range(20):
        for case in make_cases(ex.cases["generator"], seed, examples=0):
            top = int(max(case.args["train_ids"].max(), case.args["val_ids"].max()))
            v = case.args["vocab_size"]
            if case.kind in unused:
                assert top < v - 1 if case.kind == "top ids unused" else top <= v - 2, case
            else:
                assert top == v - 1, (seed, case.kind, top, v)
    assert unused <= set(case.kind for case in make_cases(ex.cases["generator"], 0, examples=0))


@pytest.mark.parametrize("seed", [1, 2, 3, 7])
def test_a_table_as_wide_as_the_ids_seen_fails_counted_bigram_loss(seed):
    result = check_solution("counted-bigram-loss", source=WIDTH_FROM_IDS, seed=seed)
    assert result["status"] == "wrong"
    failed = {c["kind"] for c in result["cases"] if c["status"] != "passed"}
    assert failed == {"top ids unused", "last id unused"}, failed
    assert result["blame"][0]["id"] == "vocab-width"


def test_a_declared_bound_may_be_a_size_minus_a_whole_number():
    import numpy as np

    from minimodel.lab.exercises.declared import _builder, problems

    spec = {"sizes": {"V": [5, 5]},
            "inputs": {"ids": {"shape": [3], "dtype": "int", "range": [0, "V-1"],
                               "special": ["V-1"]}},
            "kinds": {"float64": {}}}
    assert problems(spec, ["ids"]) == []
    ids = _builder(spec)(np.random.default_rng(0), "float64", {})["ids"]
    assert ids[0] == 4 and (ids[1:] < 4).all(), ids
    bad = {**spec, "inputs": {"ids": {**spec["inputs"]["ids"], "special": ["W-1"]}}}
    assert any("special names 'W-1'" in p for p in problems(bad, ["ids"]))
