"""A teacher adds a lesson mid-path, a question, a break and an exercise by touching content
only: ``lab new`` scaffolds each, the test fills them minimally, ``lab sync`` does the
bookkeeping, and ``lab validate`` and the content-driven tests accept them. All of it happens
in a copy of the package (the real tree is never written), and the only files that change
outside the new items' own files are the one line of ``path.yaml`` and what ``lab sync``
generates (quiz mirrors, the manifest)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import minimodel

REPO = Path(minimodel.__file__).resolve().parents[2]
CONTENT = REPO / "src" / "minimodel" / "lab" / "content"
SHIPPED_PATH = yaml.safe_load((CONTENT / "path.yaml").read_text(encoding="utf-8"))


def _unused(name: str, folder: Path, pattern: str) -> str:
    """``name``, or ``name-2``, ``name-3``... : the first the shipped content does not use, so
    whatever a contributor adds (the docs' examples included) never collides with this test."""
    taken = {p.name for p in folder.glob(pattern.format("*"))}
    n = 1
    while pattern.format(candidate := name if n == 1 else f"{name}-{n}") in taken:
        n += 1
    return candidate


# The four items this test adds: names no content uses (no list of content names here).
LESSON = _unused("probe-temperature", CONTENT / "lessons", "{}.md")
AFTER = SHIPPED_PATH[len(SHIPPED_PATH) // 2]          # mid-path, whichever lesson is there
QUESTION = f"q-{LESSON}-1"
BREAK = _unused("probe-break", CONTENT / "breaks", "{}")
EXERCISE = _unused("probe-softmax-temperature", CONTENT / "exercises", "{}")
FUNCTION = EXERCISE.replace("-", "_")                 # what `lab new exercise` names it
TEXT_EN = "A temperature T divides the logits before the softmax: T > 1 flattens it."
TEXT_ES = "Una temperatura T divide los logits antes de la softmax: T > 1 la aplana."

# Typed answers the grader must get right (lab validate wants at least 8 of each).
RIGHT = ["0.731", "0.7311", "0.73106", "0.7310", "~0.731", "0.7306", "0.7314", "0.731058"]
WRONG_ANSWERS = ["0.881", "0.269", "0.119", "0.622", "0.818", "0.900", "0.100", "0.660"]

REFERENCE = f'''import numpy as np


def {FUNCTION}(logits, temperature):
    z = logits / temperature
    z = z - z.max(axis=-1, keepdims=True)   # the row max: exp never overflows
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
'''
WRONG = {"ignores_temperature.py": "    z = logits - logits.max(axis=-1, keepdims=True)\n"
                                   "    return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)\n",
         "no_max_shift.py": "    e = np.exp(logits / temperature)\n"
                            "    return e / e.sum(axis=-1, keepdims=True)\n",
         "upcasts.py": "    z = np.asarray(logits, dtype=np.float64) / temperature\n"
                       "    e = np.exp(z - z.max(axis=-1, keepdims=True))\n"
                       "    return e / e.sum(axis=-1, keepdims=True)\n"}


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _run(root: Path, *argv: str, check: bool = True) -> str:
    """``python ARGV`` with the copy's package first on the path."""
    env = dict(os.environ, PYTHONPATH=str(root / "src"), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, *argv], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1500)
    assert done.returncode == 0 or not check, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def _fill(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def _texts(value, en: str, es: str):
    """Every TODO text of a scaffolded mapping replaced by ``en`` / ``es``."""
    if isinstance(value, dict):
        if set(value) >= {"en", "es"} and value.get("en") == "TODO":
            return {**value, "en": en, "es": es}
        return {k: _texts(v, en, es) for k, v in value.items()}
    if isinstance(value, list):
        return [_texts(v, en, es) for v in value]
    return value


@pytest.mark.slow
def test_a_teacher_adds_four_items_touching_content_only(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REPO / "src" / "minimodel", root / "src" / "minimodel",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "docs" / "quizzes", root / "docs" / "quizzes")
    shutil.copytree(REPO / "tests" / "lessons", root / "tests" / "lessons")
    shutil.copy(REPO / "tests" / "lab" / "test_lesson_path.py", root / "tests")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    content = root / "src" / "minimodel" / "lab" / "content"
    before = _snapshot(root)

    cli = ["-m", "minimodel", "lab", "new"]
    _run(root, *cli, "lesson", LESSON, "--after", AFTER)
    _run(root, *cli, "question", QUESTION, "--lesson", LESSON)
    _run(root, *cli, "exercise", EXERCISE, "--lesson", LESSON)
    _run(root, *cli, "break", BREAK, "--lesson", LESSON)
    # Scaffolded but not written: validate names each TODO, in the new items' files only.
    report = json.loads(_run(root, "-m", "minimodel", "lab", "validate", "--section", "links",
                             "--json", check=False))
    todo = [p for p in report["sections"]["links"] if "still TODO" in p]
    assert not report["ok"] and todo and all(
        p.startswith((f"lessons/{LESSON}", f"quizzes/{LESSON}", f"quizzes/labelled/{LESSON}",
                      f"breaks/{BREAK}/",
                      f"exercises/{EXERCISE}/")) for p in todo), report

    # --- fill the lesson --------------------------------------------------------------------
    for lang, text in (("", TEXT_EN), (".es", TEXT_ES)):
        page = content / "lessons" / f"{LESSON}{lang}.md"
        _fill(page, "TODO: what this lesson teaches, then its worked example" if not lang
              else "TODO: qué enseña esta lección y después su ejemplo resuelto", text)
    # --- fill the question ------------------------------------------------------------------
    quiz_file = content / "quizzes" / f"{LESSON}.yaml"
    quiz = yaml.safe_load(quiz_file.read_text(encoding="utf-8"))
    question = quiz["questions"][0]
    question.update(title={"en": "Softmax at T = 2", "es": "Softmax con T = 2"},
                    prompt={"en": "Logits [2, 0] at temperature 2: the probability of token 0? "
                                  "Three decimals.",
                            "es": "Logits [2, 0] con temperatura 2: ¿la probabilidad del token "
                                  "0? Con tres decimales."},
                    answer={"value": 0.731, "tolerance": 0.001},
                    explanation={"en": "e^1 / (e^1 + e^0) = 0.731.",
                                 "es": "e^1 / (e^1 + e^0) = 0,731."})
    quiz_file.write_text(yaml.safe_dump(quiz, allow_unicode=True, sort_keys=False), "utf-8")
    labelled = content / "quizzes" / "labelled" / f"{LESSON}.yaml"
    _fill(labelled, "en:\n      correct:\n      - TODO\n      wrong:\n      - TODO",
          "en:\n      correct: " + json.dumps(RIGHT) + "\n      wrong: " + json.dumps(WRONG_ANSWERS))
    _fill(labelled, "es:\n      correct:\n      - TODO\n      wrong:\n      - TODO",
          "es:\n      correct: " + json.dumps([a.replace(".", ",") for a in RIGHT])
          + "\n      wrong: " + json.dumps([a.replace(".", ",") for a in WRONG_ANSWERS]))
    # --- fill the exercise: new inputs (a matrix and a Python scalar), declared ---------------
    folder = content / "exercises" / EXERCISE
    spec = yaml.safe_load((folder / "exercise.yaml").read_text(encoding="utf-8"))
    spec = _texts(spec, "Softmax with a temperature: softmax(logits / T) over the last axis.",
                  "Softmax con temperatura: softmax(logits / T) sobre el último eje.")
    example = (f"\n\n    >>> {FUNCTION}(np.array([[2.0, 0.0]]), 2.0)\n"
               "    array([[0.73105858, 0.26894142]])\n")   # run against the reference
    spec["statement"] = {"en": "Softmax with a temperature over the last axis." + example,
                         "es": "Softmax con temperatura sobre el último eje." + example}
    spec["hints"] = {"en": ["Divide first.", "Subtract the row max."],
                     "es": ["Divide primero.", "Resta el máximo de la fila."]}
    spec["args"] = ["logits", "temperature"]
    spec["tolerance"] = {"rtol": 1e-9, "atol": 1e-12}
    spec["cases"] = {"examples": 2, "sizes": {"N": [1, 4], "V": [2, 20]},
                     "inputs": {"logits": {"shape": ["N", "V"], "dtype": "float",
                                           "range": [-3, 3]},
                                "temperature": {"shape": [], "dtype": "float",
                                                "range": [0.5, 2.0], "python": True}},
                     "example": {"sizes": {"N": 2, "V": 3}},
                     "kinds": {"float64": {}, "float32": {"dtype": "float32"},
                               "small temperature": {"inputs": {"temperature": {
                                   "range": [0.05, 0.1]}}},
                               "extreme logits": {"inputs": {"logits": {
                                   "range": [-50, 50], "special": [5000.0, -5000.0]}}}},
                     "labels": {"es": {"small temperature": "temperatura pequeña",
                                       "extreme logits": "logits extremos"}}}
    spec["wrong"] = [{"file": "ignores_temperature.py", "expect": "wrong", "why": "T unused"},
                     {"file": "no_max_shift.py", "expect": "wrong", "why": "exp overflows"},
                     {"file": "upcasts.py", "expect": "dtype", "why": "float32 in, float64 out"}]
    spec["clauses"] = [
        {"id": "temperature", "en": "the logits are divided by T", "kinds": ["small temperature"],
         "es": "los logits se dividen por T", "wrong": "ignores_temperature.py"},
        {"id": "stable", "en": "finite for extreme logits", "kinds": ["extreme logits"],
         "es": "finita con logits extremos", "wrong": "no_max_shift.py"},
        {"id": "dtype", "en": "float32 in, float32 out", "kinds": ["float32"],
         "es": "entra float32, sale float32", "wrong": "upcasts.py"}]
    (folder / "exercise.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True,
                                                         sort_keys=False), "utf-8")
    (folder / "reference.py").write_text(REFERENCE, encoding="utf-8")
    for old in (folder / "wrong").iterdir():
        old.unlink()
    for name, body in WRONG.items():
        (folder / "wrong" / name).write_text(
            f"import numpy as np\n\n\ndef {FUNCTION}(logits, temperature):\n"
            + body, encoding="utf-8")
    # --- fill the break: a known-good break's bug, experiment and invariants ------------------
    model = content / "breaks" / "frequent-tokens-learn-slowly"
    brk = content / "breaks" / BREAK
    for name in ("bug.patch", "experiment.py", "invariants.py"):
        shutil.copy(model / name, brk / name)
    shutil.copytree(model / "fakes", brk / "fakes")
    data = yaml.safe_load((model / "break.yaml").read_text(encoding="utf-8"))
    data.pop("former_ids", None)
    data.update(id=BREAK, order=yaml.safe_load((brk / "break.yaml").read_text("utf-8"))["order"])
    (brk / "break.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False),
                                    "utf-8")

    sync = json.loads(_run(root, "-m", "minimodel", "lab", "sync", "--json"))
    assert QUESTION in sync["stamped"]                      # its texts were new: stamped
    shipped = SHIPPED_PATH
    assert sync["counts"]["lessons"] == len(shipped) + 1

    # lab validate: the path, links, translations, quiz, glossary; the new exercise and break.
    out = json.loads(_run(root, "-m", "minimodel", "lab", "validate", "--json",
                          "--section", "links", "--section", "translations",
                          "--section", "quiz", "--section", "glossary"))
    assert out["ok"], out
    problems = _run(root, "-c", "from minimodel.lab.exercises.validate import validate_all;"
                    "from minimodel.lab.overview import case_label_problems;"
                    f"print(case_label_problems() + validate_all(ids=[{EXERCISE!r}]))")
    assert problems.strip() == "[]", problems
    # (its surface is the copied break's, whose findings test_breaks_validate.py reports)
    problems = _run(root, "-c", "from minimodel.lab.breaks import load_break;"
                    "from minimodel.lab.breaks.validate import validate_break;"
                    f"print([p for p in validate_break(load_break({BREAK!r})) "
                    "if 'on the surface before rung 2' not in p])")
    assert problems.strip() == "[]", problems
    # The content-driven tests accept it: the path file, numbers, twins.
    _run(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
         "tests/test_lesson_path.py", "tests/lessons/test_lesson_twins.py",
         "-k", "path or number or twin")
    place = shipped.index(AFTER) + 2                          # numbered from 1, after AFTER
    assert f"{place:02d} {LESSON}" in _run(root, "-c", "from minimodel.lab.lessons import "
                                            "load_lessons; print('\\n'.join(f'{l.number:02d} '"
                                            "f'{l.slug}' for l in load_lessons()))")

    # Touched: the new items' files, one line of path.yaml, and what sync generates.
    after = _snapshot(root)
    changed = sorted(k for k in after if before.get(k) != after[k])
    lab = "src/minimodel/lab/content/"
    own = (f"{lab}lessons/{LESSON}.md", f"{lab}lessons/{LESSON}.es.md",
           f"{lab}quizzes/{LESSON}.yaml", f"{lab}quizzes/labelled/{LESSON}.yaml", f"{lab}exercises/{EXERCISE}/", f"{lab}breaks/{BREAK}/",
           f"docs/quizzes/{LESSON}.", f"{lab}MANIFEST.json", f"{lab}path.yaml")
    assert [k for k in changed if not k.startswith(own)] == []
    path_diff = set(after) - set(before)
    assert not any(k.startswith("tests/") for k in path_diff)
    old = (REPO / lab / "path.yaml").read_text(encoding="utf-8").splitlines()
    new = (root / lab / "path.yaml").read_text(encoding="utf-8").splitlines()
    assert [line for line in new if line not in old] == [f"- {LESSON}"] and len(new) == len(old) + 1
    assert new.index(f"- {LESSON}") == new.index(f"- {AFTER}") + 1


def test_declared_inputs_build_every_kind_and_problems_name_the_field():
    from minimodel.lab.exercises.cases import make_cases
    from minimodel.lab.exercises.declared import declare, problems
    from minimodel.lab.i18n import case_label

    spec = {"sizes": {"N": [1, 3], "V": [2, 5]},
            "inputs": {"logits": {"shape": ["N", "V"], "dtype": "float", "range": [-3, 3]},
                       "ids": {"shape": ["N"], "dtype": "int", "range": [0, "V"]},
                       "t": {"shape": [], "dtype": "float", "range": [0.5, 2], "python": True}},
            "example": {"sizes": {"N": 2, "V": 3}},
            "kinds": {"float32": {"dtype": "float32"}, "one row": {"sizes": {"N": 1}},
                      "big": {"inputs": {"logits": {"special": [1e4]}}},
                      "default t": {"inputs": {"t": {"omit": True}}}},
            "labels": {"es": {"one row": "una fila", "big": "grandes", "default t": "t por "
                                                                                 "defecto"}}}
    name = declare("demo-declared", spec, ["logits", "ids", "t"])
    example, _, f32, one_row, big, no_t = make_cases(name, seed=5)
    assert example.args["logits"].shape == (2, 3) and isinstance(example.args["t"], float)
    assert f32.args["logits"].dtype == np.float32 and f32.args["ids"].dtype == np.int64
    assert one_row.args["logits"].shape[0] == 1 and big.args["logits"].flat[0] == 1e4
    assert set(no_t.args) == {"logits", "ids"}
    assert all(0 <= i < c.args["logits"].shape[1] for c in (f32, one_row)
               for i in c.args["ids"])
    assert case_label("float32, one row", "es") == "float32, una fila"
    bad = {**spec, "inputs": {"logits": {"shape": ["N", "W"], "dtype": "f16",
                                         "range": [-3, 3]}}, "labels": {}}
    found = problems(bad, ["logits"])
    assert "cases.inputs.logits.shape names 'W', which cases.sizes does not declare; add it " \
           "there as [low, high]" in found
    assert any("cases.inputs.logits.dtype is 'f16'" in p for p in found)
    assert any("no Spanish label for the kind 'one row'" in p for p in found)


def test_a_check_script_without_its_footer_is_told_so(tmp_path):
    from types import SimpleNamespace

    from minimodel.lab.breaks.validate import _no_verdict

    script = tmp_path / "invariants.py"
    script.write_text("checks = None\n", encoding="utf-8")
    message = _no_verdict(SimpleNamespace(path=lambda role: script), run=None)
    assert message.startswith("invariants.py never calls checks.finish(), so its invariants "
                              "never ran and it printed no PASS/FAIL line")
    assert 'if __name__ == "__main__":\n        checks.finish()' in message


def test_questions_added_to_a_new_quiz_file_stay_valid_yaml_and_are_listed_once(tmp_path):
    from minimodel.lab.authoring import new_question

    content = tmp_path / "content"
    (content / "lessons").mkdir(parents=True)
    (content / "path.yaml").write_text("- demo\n", encoding="utf-8")
    for name in ("demo.md", "demo.es.md"):   # one id listed by hand before it is scaffolded
        (content / "lessons" / name).write_text(
            '---\ntitle: "Demo"\nquiz: [q-demo-2]\nbreaks: []\nexercises: []\n---\n\n# Demo\n',
            encoding="utf-8")
    for n in (1, 2, 3):
        new_question(f"q-demo-{n}", "demo", content=content)
    quiz = yaml.safe_load((content / "quizzes" / "demo.yaml").read_text(encoding="utf-8"))
    assert [q["id"] for q in quiz["questions"]] == ["q-demo-1", "q-demo-2", "q-demo-3"]
    labelled = yaml.safe_load((content / "quizzes" / "labelled" / "demo.yaml")
                              .read_text(encoding="utf-8"))
    assert list(labelled["answers"]) == ["q-demo-1", "q-demo-2", "q-demo-3"]
    for name in ("demo.md", "demo.es.md"):
        text = (content / "lessons" / name).read_text(encoding="utf-8")
        assert "quiz: [q-demo-2, q-demo-1, q-demo-3]\n" in text
