"""A copy of the lab's own solution is practice; honest work that happens to equal a one-line
reference is the learner's (src/minimodel/lab/exercises/copies.py, docs/judge.md step 5).

The tied head's reference is ``return h @ E.T``, the statement's own formula, and the lookup's
is ``return E[ids]``: a learner who fills the starter with that line wrote the answer, and the
pass is recorded. A pasted reference of substance (two statements or more) is practice whatever
its layout, and a one-line reference pasted whole is recognised by its own docstring."""

from __future__ import annotations

import pytest

from minimodel.lab.exercises import check_solution, get_exercise
from minimodel.lab.exercises.copies import MIN_STATEMENTS, is_lab_copy
from minimodel.lab.exercises.stubs import stub_text
from minimodel.lab.progress import Progress

RAISE = '    raise NotImplementedError("write your solution here")\n'


def _filled(exercise: str, body: str, numpy_import: bool = True) -> str:
    """The starter file of ``exercise`` with its stub body replaced by ``body``."""
    text = stub_text(get_exercise(exercise), file="mine.py")
    assert RAISE in text and "import numpy as np\n" in text
    text = text.replace(RAISE, body)
    return text if numpy_import else text.replace("import numpy as np\n", "")


ONE_LINE_ANSWERS = [
    ("tied-head-logits", "    return h @ E.T\n", True),
    ("tied-head-logits", "    return h @ E.T\n", False),     # the attack's file: no import
    ("tied-head-logits", "    return h @ E.T  # (N, T, d) @ (d, V) -> (N, T, V)\n", False),
    ("tied-head-logits", "    return np.matmul(h, E.T)\n", True),
    ("tied-head-logits", "    logits = h @ E.T\n    return logits\n", True),
    ("embedding-lookup", "    return E[ids]\n", True),
    ("embedding-lookup", "    return E[ids]\n", False),
    ("embedding-lookup", "    return E[ids]  # (N, T) ids -> (N, T, d)\n", True),
    ("embedding-lookup", "    return np.take(E, ids, axis=0)\n", True),
]


@pytest.mark.parametrize("exercise, body, numpy_import", ONE_LINE_ANSWERS)
def test_a_one_line_honest_answer_is_recorded_as_the_learners(exercise, body, numpy_import,
                                                              tmp_path, monkeypatch):
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    source = _filled(exercise, body, numpy_import)
    assert not is_lab_copy(get_exercise(exercise), source)
    path = tmp_path / "mine.py"
    path.write_text(source, encoding="utf-8")
    from minimodel.cli import main

    assert main(["exercise", "check", exercise, "--file", str(path)]) == 0
    assert Progress(tmp_path / "learner").get("exercise", exercise)["status"] == "passed"
    result = check_solution(exercise, path)
    assert result["passed"] is True and result["practice"] is False, result["message"]
    assert "copy" not in result["message"]


@pytest.mark.parametrize("exercise", ["tied-head-logits", "embedding-lookup"])
def test_a_one_line_reference_pasted_whole_is_practice(exercise, tmp_path, monkeypatch):
    """Its own docstring is in the file: the reference's file, pasted (reflowed or not)."""
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    ex = get_exercise(exercise)
    text = ex.reference_path.read_text(encoding="utf-8")
    reflowed = text.replace('"""Reference: ', '"""\nReference:\n    ', 1)
    self_test = text + '\n\nif __name__ == "__main__":\n    print("self-test")\n'
    for pasted in (text, reflowed, self_test):
        assert is_lab_copy(ex, pasted), pasted
        path = tmp_path / "pasted.py"
        path.write_text(pasted, encoding="utf-8")
        from minimodel.cli import main

        assert main(["exercise", "check", exercise, "--file", str(path)]) == 0
        assert Progress(tmp_path / "learner").get("exercise", exercise)["status"] != "passed"
        result = check_solution(exercise, path)
        assert result["passed"] is True and result["practice"] is True
        assert "copy of the lab's own solution" in result["message"]


def _without_strings_and_comments(source: str) -> str:
    import ast

    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and len(body) > 1:
            del body[0]
    return ast.unparse(tree)


@pytest.mark.parametrize("exercise", ["gelu-tanh", "counted-bigram-loss", "cross-entropy",
                                      "embedding-onehot-matmul"])
def test_a_pasted_multi_line_reference_is_practice_without_its_docstrings(exercise):
    ex = get_exercise(exercise)
    text = ex.reference_path.read_text(encoding="utf-8")
    bare = _without_strings_and_comments(text)
    assert '"""' not in bare and "#" not in bare
    assert is_lab_copy(ex, text) and is_lab_copy(ex, bare)
    result = check_solution(ex, source=bare)
    assert result["passed"] is True and result["practice"] is True
    assert "copy of the lab's own solution" in result["message"]


def test_every_lab_solution_of_substance_has_at_least_the_threshold():
    """The rule's line: the two one-statement references are the statement's formula, and
    every other reference or alternative has two statements or more (so a stripped paste of
    it is still recognised)."""
    from minimodel.lab.exercises import all_exercises
    from minimodel.lab.exercises.copies import _statements, lab_solution_files
    from minimodel.lab.pyparse import parse_python

    short = set()
    for ex in all_exercises():
        for name in lab_solution_files(ex):
            with open(name, encoding="utf-8") as handle:
                if _statements(parse_python(handle.read())) < MIN_STATEMENTS:
                    short.add(ex.id)
    assert short == {"tied-head-logits", "embedding-lookup"}
