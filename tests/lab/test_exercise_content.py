"""Exercise content: every reference passes its judge, every known-wrong solution is rejected
with its declared status, and the text exists in English and Spanish."""

from __future__ import annotations

import sys
import types
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
try:
    import minimodel  # noqa: F401
except ImportError:  # package __init__ mid-rewrite by others: the lab needs only numpy
    _stub = types.ModuleType("minimodel")
    _stub.__path__ = [str(SRC / "minimodel")]
    _stub.__version__ = "0.0.0"
    sys.modules["minimodel"] = _stub

from minimodel.lab.exercises import all_exercises, list_exercises, validate_all  # noqa: E402

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
    assert expects[("mlm-with-tied-output-head", "untied_head.py")] == "wrong"
    assert expects[("cbow-step", "fancy_index_add.py")] == "wrong"
    assert expects[("multi-head-self-attention", "torch_sdpa.py")] == "forbidden"


def test_validate_all_content_through_the_real_judge():
    """Runs every reference, alternative, stub and wrong file in the subprocess judge."""
    assert validate_all(seed=1234) == []
