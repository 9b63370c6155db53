"""A copy of the lab's own solution is practice; honest work that happens to equal a reference
is the learner's (src/minimodel/lab/exercises/copies.py, docs/judge.md step 5).

The tied head's reference is ``return h @ E.T``, the statement's own formula; the one-hot
lookup's is three lines whose names the statement gives (``V = E.shape[0]``, ``onehot``); the
GELU's names its constant ``c``. A learner who types them wrote the answer, and the pass is
recorded. A reference's file pasted is recognised by its own docstrings, whatever the layout,
and without them by the names its author chose that the statement does not give."""

from __future__ import annotations

import pytest

from minimodel.lab.exercises import check_solution, get_exercise
from minimodel.lab.exercises.copies import is_lab_copy, lab_copies
from minimodel.lab.exercises.stubs import stub_text
from minimodel.lab.progress import Progress
from own_work import lifted, without_docstrings

RAISE = '    raise NotImplementedError("write your solution here")\n'


def _filled(exercise: str, body: str, numpy_import: bool = True) -> str:
    """The starter file of ``exercise`` with its stub body replaced by ``body``."""
    text = stub_text(get_exercise(exercise), file="mine.py")
    assert RAISE in text and "import numpy as np\n" in text
    text = text.replace(RAISE, body)
    if "math." in body:
        text = text.replace("import numpy as np\n", "import math\n\nimport numpy as np\n")
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
    # the ninth attack: the statement's own names, the reference's tree to the letter
    ("embedding-onehot-matmul", "    V = E.shape[0]\n"
     "    onehot = (ids[..., None] == np.arange(V)).astype(E.dtype)\n"
     "    return onehot @ E\n", True),
    ("gelu-tanh", "    c = math.sqrt(2.0 / math.pi)\n"
     "    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))\n", True),
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


@pytest.mark.parametrize("exercise, authors_names", [
    ("gelu-tanh", False), ("embedding-onehot-matmul", False), ("layer-norm", False),
    ("counted-bigram-loss", True), ("cross-entropy", True), ("cbow-step", True)])
def test_a_pasted_reference_is_practice_and_a_bare_tree_only_with_the_authors_names(
        exercise, authors_names):
    """The file pasted carries the reference's docstrings: practice. Without them, the tree is
    practice when it holds a name the statement does not give (``lse``, ``p_next``), and the
    learner's when every name is the statement's or a single letter (an honest learner
    types it to the letter)."""
    ex = get_exercise(exercise)
    text = ex.reference_path.read_text(encoding="utf-8")
    reformatted = text.replace("    ", "  ")
    bare = without_docstrings(text)
    assert '"""' not in bare and "#" not in bare
    assert is_lab_copy(ex, text) and is_lab_copy(ex, reformatted)
    assert is_lab_copy(ex, bare) is authors_names
    result = check_solution(ex, source=text)
    assert result["passed"] is True and result["practice"] is True
    assert "copy of the lab's own solution" in result["message"]


def test_every_lab_solution_has_a_docstring_its_starter_does_not():
    """The rule's ground: each reference and alternative carries a docstring of its own, and
    no starter file hands one of them to the learner."""
    import ast

    from minimodel.lab.exercises import all_exercises
    from minimodel.lab.exercises.copies import _docstrings, lab_solution_files

    for ex in all_exercises():
        starter = _docstrings(ast.parse(stub_text(ex, file="mine.py")))
        for name in lab_solution_files(ex):
            with open(name, encoding="utf-8") as handle:
                own = _docstrings(ast.parse(handle.read()))
            assert own, f"{name} has no docstring"
            assert not own & starter, f"{ex.id}: the starter carries a docstring of {name}"


# -- one reveal, several exercises: the MLM reference also holds a layer norm, a GELU and an
# attention. A function of it is recognised in any exercise's file, moved and renamed.

MLM_SOURCE = get_exercise("mlm-with-tied-output-head").reference_path.read_text(encoding="utf-8")
MLM_IDS = {"mlm-forward-pass", "mlm-with-tied-output-head"}
HEADER = "import math\n\nimport numpy as np\n\n_GELU_C = math.sqrt(2.0 / math.pi)\nLN_EPS = 1e-5"
LIFTED = {
    # attention and its softmax helper, both renamed, docstrings gone, called by the
    # exercise's function (the rest of the MLM file deleted)
    "multi-head-self-attention": without_docstrings(
        lifted(MLM_SOURCE, {"self_attention": "attend", "_softmax": "rows_softmax"}, HEADER)
        + "\n\ndef multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):\n"
          "    return attend(x, w_q, w_k, w_v, w_o, num_heads)\n"),
    # the GELU, renamed, without its docstring, reached through an alias
    "gelu-tanh": without_docstrings(lifted(MLM_SOURCE, {"gelu_tanh": "tanh_gelu"}, HEADER)
                                    + "\n\ngelu = tanh_gelu\n"),
    # the layer norm with its docstring, inside the exercise's own signature
    "layer-norm": lifted(MLM_SOURCE, {"layer_norm": "normalise"}, HEADER)
    + "\n\ndef layer_norm(x, weight=None, bias=None, eps=1e-5):\n"
      "    y = normalise(x, eps)\n"
      "    y = y if weight is None else y * weight\n"
      "    return y if bias is None else y + bias\n",
}


@pytest.mark.parametrize("exercise", sorted(LIFTED))
def test_a_function_lifted_from_another_exercises_reference_is_a_copy(exercise):
    """Unseen, it is practice; once the MLM reference has been shown, a pass after viewing
    the solution, never the learner's own."""
    source = LIFTED[exercise]
    ex = get_exercise(exercise)
    copied = lab_copies(ex, source)
    assert copied and all(c.shown_by == MLM_IDS for c in copied), copied
    unseen = check_solution(ex, source=source)
    assert unseen["passed"] is True and unseen["practice"] is True
    assert unseen["copy_viewed"] is False
    assert "copy of the lab's own solution" in unseen["message"]
    other = check_solution(ex, source=source, viewed={"cross-entropy", exercise})
    assert other["practice"] is True    # the solutions shown do not hold the MLM's code
    shown = check_solution(ex, source=source, viewed={"mlm-with-tied-output-head"})
    assert shown["passed"] is True and shown["practice"] is False
    assert shown["copy_viewed"] is True and "copy" not in shown["message"]


def test_after_the_mlm_reveal_its_functions_pass_other_exercises_only_as_revealed(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    from minimodel.cli import main

    progress = Progress(tmp_path / "learner")
    path = tmp_path / "gelu.py"
    path.write_text(LIFTED["gelu-tanh"], encoding="utf-8")
    assert main(["exercise", "check", "gelu-tanh", "--file", str(path)]) == 0
    assert progress.get("exercise", "gelu-tanh")["status"] == "attempted"   # practice
    assert main(["exercise", "solution", "mlm-with-tied-output-head", "--yes"]) == 0
    # the two MLM exercises share the file shown: both solutions were seen
    assert progress.get("exercise", "mlm-forward-pass")["solution_viewed"] is True
    capsys.readouterr()
    assert main(["exercise", "check", "gelu-tanh", "--file", str(path)]) == 0
    assert "holds code of a solution you were shown" in " ".join(capsys.readouterr().out.split())
    entry = progress.get("exercise", "gelu-tanh")
    assert entry["status"] == "passed" and entry["revealed"] is True
    assert not entry.get("solution_viewed")
    # the learner's own GELU later is their own pass
    mine = tmp_path / "mine.py"
    mine.write_text(_filled("gelu-tanh", "    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / "
                                         "math.pi) * (x + 0.044715 * x**3)))\n"), "utf-8")
    assert main(["exercise", "check", "gelu-tanh", "--file", str(mine)]) == 0
    assert progress.get("exercise", "gelu-tanh")["revealed"] is False


HONEST = [
    # the statement's names only: the MLM reference's layer norm and GELU trees, typed with
    # the statement's constants (no LN_EPS, no _GELU_C), without the lab's docstrings
    ("layer-norm", "def layer_norm(x, weight=None, bias=None, eps=1e-5):\n"
     "    mean = x.mean(axis=-1, keepdims=True)\n"
     "    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)\n"
     "    y = (x - mean) / np.sqrt(var + eps)\n"
     "    y = y if weight is None else y * weight\n"
     "    return y if bias is None else y + bias\n"),
    ("gelu-tanh", "def gelu_tanh(x):\n"
     "    c = math.sqrt(2.0 / math.pi)\n"
     "    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))\n\n\ngelu = gelu_tanh\n"),
    # an attention of one's own, with a softmax helper of one's own names
    ("multi-head-self-attention", "def softmax(s):\n"
     "    s = s - s.max(axis=-1, keepdims=True)\n"
     "    p = np.exp(s)\n"
     "    return p / p.sum(axis=-1, keepdims=True)\n\n\n"
     "def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):\n"
     "    N, T, d = x.shape\n"
     "    h = d // num_heads\n"
     "    q, k, v = ((x @ w).reshape(N, T, num_heads, h).transpose(0, 2, 1, 3)\n"
     "               for w in (w_q, w_k, w_v))\n"
     "    a = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(h))\n"
     "    return (a @ v).transpose(0, 2, 1, 3).reshape(N, T, d) @ w_o\n"),
]


@pytest.mark.parametrize("exercise, code", HONEST)
def test_honest_functions_near_a_shown_references_tree_stay_own(exercise, code):
    """Never viewed, other solutions viewed, or even the MLM reference viewed: each is another
    tree than the reference's up to renaming (the GELU's constant computed inside it, the
    layer norm's weight and bias lines, the attention's generator), the learner's own."""
    source = "import math\n\nimport numpy as np\n\n\n" + code
    ex = get_exercise(exercise)
    assert lab_copies(ex, source) == [] and lab_copies(ex, source, MLM_IDS) == []
    for viewed in ((), {"cross-entropy", "tied-head-logits"}, MLM_IDS):
        result = check_solution(ex, source=source, viewed=viewed)
        assert result["passed"] is True and result["practice"] is False, result["message"]
        assert result["copy_viewed"] is False


# -- after viewing: a function of a shown solution, its names changed consistently (locals,
# module constants, helpers, import aliases), is a pass after viewing, never the learner's own.

ATTACK_12 = {   # the twelfth attack's files: the MLM reference's functions, two names changed
    "multi-head-self-attention": (
        "import math\nimport numpy as np\n\n\ndef _softmax(scores):\n"
        "    s = scores - scores.max(axis=-1, keepdims=True)\n    e = np.exp(s)\n"
        "    return e / e.sum(axis=-1, keepdims=True)\n\n\n"
        "def multi_head_attention(h, w_q, w_k, w_v, w_o, num_heads):\n"
        "    n, t, d = h.shape\n    d_head = d // num_heads\n\n    def split(z):\n"
        "        return z.reshape(n, t, num_heads, d_head).transpose(0, 2, 1, 3)\n\n"
        "    q, k, v = split(h @ w_q), split(h @ w_k), split(h @ w_v)\n"
        "    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d_head)\n"
        "    ctx = _softmax(scores) @ v\n"
        "    out = ctx.transpose(0, 2, 1, 3).reshape(n, t, d)\n    return out @ w_o\n"),
    "gelu-tanh": (
        "import math\nimport numpy as np\n\nC = math.sqrt(2.0 / math.pi)\n\n\n"
        "def gelu(x):\n    return 0.5 * x * (1.0 + np.tanh(C * (x + 0.044715 * x**3)))\n"),
}
# the same, every name changed again: locals, the constant, the helper, the nested function,
# the import aliases, and ``from math import sqrt`` for ``math.sqrt``
MY_RENAMING = {
    "multi-head-self-attention": (
        "from math import sqrt\nimport numpy as xp\n\n\ndef row_probs(a):\n"
        "    a0 = a - a.max(axis=-1, keepdims=True)\n    ex = xp.exp(a0)\n"
        "    return ex / ex.sum(axis=-1, keepdims=True)\n\n\n"
        "def multi_head_attention(x, wq, wk, wv, wo, heads):\n"
        "    B, L, D = x.shape\n    dh = D // heads\n\n    def heads_of(m):\n"
        "        return m.reshape(B, L, heads, dh).transpose(0, 2, 1, 3)\n\n"
        "    Q, K, Vv = heads_of(x @ wq), heads_of(x @ wk), heads_of(x @ wv)\n"
        "    att = Q @ K.transpose(0, 1, 3, 2) / sqrt(dh)\n"
        "    mixed = row_probs(att) @ Vv\n"
        "    y = mixed.transpose(0, 2, 1, 3).reshape(B, L, D)\n    return y @ wo\n"),
    "gelu-tanh": (
        "import math as m\nimport numpy\n\nK_TANH = m.sqrt(2.0 / m.pi)\n\n\n"
        "def gelu(z):\n    return 0.5 * z * (1.0 + numpy.tanh(K_TANH * (z + 0.044715 * z**3)))\n"),
}
# not the same tree, whatever was viewed: the softmax helper inlined into the attention
INLINED = "from math import sqrt\nimport numpy as xp\n" + MY_RENAMING[
    "multi-head-self-attention"].split("\n\n\n", 2)[2].replace(
    "    mixed = row_probs(att) @ Vv\n",
    "    att = xp.exp(att - att.max(axis=-1, keepdims=True))\n"
    "    mixed = att / att.sum(axis=-1, keepdims=True) @ Vv\n")


@pytest.mark.parametrize("exercise", sorted(ATTACK_12))
@pytest.mark.parametrize("files", [ATTACK_12, MY_RENAMING], ids=["attack-12", "renamed"])
def test_a_shown_function_renamed_passes_only_after_viewing(exercise, files):
    ex = get_exercise(exercise)
    source = files[exercise]
    never = check_solution(ex, source=source)
    assert never["passed"] is True and never["practice"] is False   # nothing viewed: own
    assert never["copy_viewed"] is False
    other = check_solution(ex, source=source, viewed={"cross-entropy"})
    assert other["practice"] is False and other["copy_viewed"] is False
    copied = lab_copies(ex, source, MLM_IDS)
    assert {c.function for c in copied} >= ({"gelu"} if exercise == "gelu-tanh" else
                                             {"multi_head_attention", files[exercise].split(
                                                 "def ")[1].split("(")[0]})
    shown = check_solution(ex, source=source, viewed=MLM_IDS)
    assert shown["passed"] is True and shown["practice"] is False
    assert shown["copy_viewed"] is True, shown["message"]


def test_after_viewing_the_reveal_is_recorded_through_the_cli(tmp_path, monkeypatch):
    """The attack's steps: ``exercise solution mlm-forward-pass --yes``, then check the
    attention and the GELU typed from it with two names changed: revealed, not own."""
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    from minimodel.cli import main

    progress = Progress(tmp_path / "learner")
    assert main(["exercise", "solution", "mlm-forward-pass", "--yes"]) == 0
    for exercise, source in sorted(ATTACK_12.items()):
        path = tmp_path / f"{exercise}.py"
        path.write_text(source, encoding="utf-8")
        assert main(["exercise", "check", exercise, "--file", str(path)]) == 0
        entry = progress.get("exercise", exercise)
        assert entry["status"] == "passed" and entry["revealed"] is True, entry


def test_an_inlined_helper_is_another_tree_and_stays_own():
    """The shown attention with its softmax helper written inline (and deleted) is another
    tree: the learner's own, even after viewing (see docs/judge.md, step 5)."""
    ex = get_exercise("multi-head-self-attention")
    assert "def row_probs" not in INLINED and "def multi_head_attention" in INLINED
    assert lab_copies(ex, INLINED, MLM_IDS) == []
    result = check_solution(ex, source=INLINED, viewed=MLM_IDS)
    assert result["passed"] is True and result["practice"] is False, result["message"]
    assert result["copy_viewed"] is False


@pytest.mark.parametrize("exercise, body", [
    ("tied-head-logits", "    return h @ E.T\n"),
    ("embedding-lookup", "    return E[ids]\n")])
def test_a_one_liner_is_after_viewing_only_once_its_solution_was_shown(exercise, body):
    """The statement's formula typed by a learner who never viewed it is theirs; after
    ``exercise solution`` showed it, "after viewing" is the truthful label."""
    ex = get_exercise(exercise)
    source = _filled(exercise, body)
    assert lab_copies(ex, source, {"cross-entropy", "gelu-tanh"}) == []
    assert [c.function for c in lab_copies(ex, source, {exercise})] == [ex.function]
    assert check_solution(ex, source=source, viewed={exercise})["copy_viewed"] is True


# -- dead code: what cannot change behaviour is dropped before both comparisons (the
# thirteenth attack: the shown GELU or layer norm with a ``pass`` after its ``return``).

GELU_RETURN = "    return 0.5 * x * (1.0 + np.tanh({c} * (x + 0.044715 * x**3)))\n"
DEAD_CODE = {   # spellings of "nothing", each around the GELU's one live statement
    "pass-first": "    pass\n{ret}",
    "bare-constants": "    ...\n    42\n    'a note, not a docstring'\n{ret}    -1.5\n",
    "after-return": "{ret}    x = x * 2\n    print(x)\n    return x\n",
    "raise-after-return": "{ret}    raise ValueError('never reached')\n    pass\n",
    "nested-def-after-return": "{ret}    def unused(y):\n        return y\n",
    # names bound only in dead code: the import alias and the constant "redefined"
    "shadows-after-return": "{ret}    np = None\n    def C():\n        pass\n",
}


def _gelu_file(constant: str, body: str) -> str:
    """A GELU file reading its constant from the module as the MLM reference does."""
    return (f"import math\n\nimport numpy as np\n\n{constant} = math.sqrt(2.0 / math.pi)\n\n\n"
            "def gelu(x):\n" + body.format(ret=GELU_RETURN.format(c=constant)))


@pytest.mark.parametrize("dead", sorted(DEAD_CODE))
@pytest.mark.parametrize("constant", ["_GELU_C", "C"], ids=["authors-name", "renamed"])
def test_dead_code_changes_nothing_in_either_comparison(dead, constant):
    """The padded GELU is recognised exactly as the bare one, whatever was viewed: with the
    author's constant a copy even unseen, renamed a copy only after viewing."""
    ex = get_exercise("gelu-tanh")
    bare = _gelu_file(constant, "{ret}")
    padded = _gelu_file(constant, DEAD_CODE[dead])
    for viewed in ((), {"cross-entropy"}, MLM_IDS):
        assert lab_copies(ex, padded, viewed) == lab_copies(ex, bare, viewed), viewed
    assert bool(lab_copies(ex, padded)) is (constant == "_GELU_C")
    assert [c.function for c in lab_copies(ex, padded, MLM_IDS)] == ["gelu"]


def test_a_padded_layer_norm_passes_only_after_viewing():
    """The shown layer norm renamed, with a late docstring, an Ellipsis and statements after
    its return, inside the exercise's signature: own when nothing was viewed, "after viewing"
    once the MLM reference was shown."""
    ex = get_exercise("layer-norm")
    source = ("import numpy as np\n\nEPS = 1e-5\n\n\n"
              "def normalise(x, eps=EPS):\n    ...\n"
              "    mu = x.mean(axis=-1, keepdims=True)\n"
              "    v = ((x - mu) ** 2).mean(axis=-1, keepdims=True)\n"
              "    return (x - mu) / np.sqrt(v + eps)\n"
              "    '''written after the return'''\n    mu = 0\n\n\n"
              "def layer_norm(x, weight=None, bias=None, eps=1e-5):\n"
              "    y = normalise(x, eps)\n    if weight is not None:\n        y = y * weight\n"
              "    if bias is not None:\n        y = y + bias\n    return y\n")
    never = check_solution(ex, source=source)
    assert never["passed"] is True and never["practice"] is False
    assert never["copy_viewed"] is False
    assert [c.function for c in lab_copies(ex, source, MLM_IDS)] == ["normalise"]
    shown = check_solution(ex, source=source, viewed=MLM_IDS)
    assert shown["passed"] is True and shown["practice"] is False
    assert shown["copy_viewed"] is True, shown["message"]


def test_a_statement_that_runs_is_another_tree():
    """The stated limit: an unused assignment runs, so the shown GELU with one is another
    tree, the learner's own even after viewing."""
    ex = get_exercise("gelu-tanh")
    padded = _gelu_file("C", "    t = 0\n{ret}")
    assert lab_copies(ex, padded, MLM_IDS) == []
    assert lab_copies(ex, _gelu_file("C", "{ret}"), MLM_IDS) != []


def test_a_copy_after_an_own_pass_says_so_and_keeps_the_own_pass(tmp_path, monkeypatch,
                                                                  capsys):
    """An own pass made before viewing stays own (minimodel.lab.revealed); a later check of
    the shown code, pasted, says it is a copy instead of saying nothing."""
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    from minimodel.cli import main

    progress = Progress(tmp_path / "learner")
    mine = tmp_path / "mine.py"
    mine.write_text(_filled("gelu-tanh", "    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / "
                                         "math.pi) * (x + 0.044715 * x**3)))\n"), "utf-8")
    assert main(["exercise", "check", "gelu-tanh", "--file", str(mine)]) == 0
    assert main(["exercise", "solution", "mlm-forward-pass", "--yes"]) == 0
    pasted = tmp_path / "pasted.py"
    pasted.write_text(_gelu_file("_GELU_C", DEAD_CODE["after-return"]), "utf-8")
    capsys.readouterr()
    assert main(["exercise", "check", "gelu-tanh", "--file", str(pasted)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "this pass is a copy, not your own work" in out
    assert "stays recorded as your own" in out
    entry = progress.get("exercise", "gelu-tanh")
    assert entry["status"] == "passed" and entry["revealed"] is False
    # the tutor's exercise_check tells the learner the same
    from minimodel.messages import say
    from minimodel.tutor.exercise_tools import ExerciseDesk
    from minimodel.tutor.learner import Learner
    out = ExerciseDesk(Learner(tmp_path / "learner")).check("gelu-tanh", file=str(pasted))
    assert out["passed"] is True and out["revealed"] is False
    assert out["say"] == say("tutor.exercise.copy_own_kept", "en")
