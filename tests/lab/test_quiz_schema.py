"""Quiz content and validation: the canonical YAML, broken files, stale translation hashes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from minimodel.lab import quiz
from minimodel.lab.i18n import LANGS
from minimodel.lab.quiz import schema

QUIZ_ID = "phase-13-embeddings"
CANONICAL = quiz.CONTENT_DIR / f"{QUIZ_ID}.yaml"


def test_canonical_quizzes_are_valid():
    assert quiz.validate_all() == []
    assert QUIZ_ID in quiz.list_quizzes()


def test_canonical_quiz_covers_every_kind_in_both_languages():
    q = quiz.load_quiz(QUIZ_ID)
    assert len(q.questions) >= 22
    assert {x.kind for x in q.questions} == set(quiz.KINDS)
    assert q.ids == [f"q-13-{i:02d}" for i in range(1, len(q.questions) + 1)]
    for question in q.questions:
        texts = [question.title, question.prompt, question.explanation, *question.choices]
        for text in texts:
            assert set(text) == set(LANGS) and all(text[lang].strip() for lang in LANGS)
        # The Spanish is a translation, not a copy (choices like "(4, 8, 512)" may be equal).
        assert question.prompt["es"] != question.prompt["en"]


def test_right_answers_are_spread_over_the_choice_positions():
    """A learner must not learn to type 1: across all quizzes every position holds some
    single-choice answers and none holds most of them, and a multi-choice answer is not
    simply the first few choices."""
    questions = [q for each in quiz.load_all() for q in each.questions]
    singles = [q.answer for q in questions if q.kind == "single"]
    counts = [singles.count(position) for position in range(4)]
    assert min(counts) >= len(singles) // 8 and max(counts) <= len(singles) // 2, counts
    prefixes = [q.id for q in questions if q.kind == "multi"
                and sorted(q.answer) == list(range(len(q.answer)))]
    assert prefixes == []


def test_canonical_facts():
    q = quiz.load_quiz(QUIZ_ID)
    numeric = {x.id: x.answer["value"] for x in q.questions if x.kind == "numeric"}
    assert numeric["q-13-07"] == 8192 * 256 == 2_097_152
    assert numeric["q-13-15"] == pytest.approx(6.238, abs=1e-3)   # ln 512
    assert numeric["q-13-18"] == pytest.approx(5.545, abs=1e-3)   # ln 256
    assert numeric["q-13-03"] == len({3, 7, 9, 1})
    shape_bug = q.question("q-13-16")
    assert shape_bug.choices[shape_bug.answer]["en"] == "(4, 8, 512)"


def test_unknown_quiz_names_the_available_ones():
    with pytest.raises(ValueError, match=r"unknown quiz 'nope'.*phase-13-embeddings"):
        quiz.load_quiz("nope")


# --- broken files -------------------------------------------------------------------------


def _canonical() -> dict:
    return yaml.safe_load(CANONICAL.read_text(encoding="utf-8"))


def _write(tmp_path: Path, data: dict, name: str = QUIZ_ID) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _q(data: dict, qid: str) -> dict:
    return next(q for q in data["questions"] if q["id"] == qid)


BREAKS = {
    "index out of range": (lambda d: _q(d, "q-13-01").update(answer=7),
                           "q-13-01: answer index 7 is out of range for 4 choices"),
    "single with a list": (lambda d: _q(d, "q-13-01").update(answer=[1]),
                           "question q-13-01 field answer: [1] is not of type 'integer'"),
    "multi empty": (lambda d: _q(d, "q-13-05").update(answer=[]),
                    "question q-13-05 field answer: [] should be non-empty"),
    "missing es": (lambda d: _q(d, "q-13-02")["prompt"].pop("es"),
                   "question q-13-02 field prompt: 'es' is a required property"),
    "blank en": (lambda d: _q(d, "q-13-02")["explanation"].update(en="   "),
                 "question q-13-02 explanation: the 'en' text is missing or blank"),
    "negative tolerance": (lambda d: _q(d, "q-13-15")["answer"].update(tolerance=-0.1),
                           "question q-13-15 field answer.tolerance: -0.1 is less than the "
                           "minimum of 0"),
    "short without forms": (lambda d: _q(d, "q-13-19")["answer"].update(en=[]),
                            "question q-13-19 field answer.en: [] should be non-empty"),
    "short form of punctuation": (lambda d: _q(d, "q-13-19")["answer"]["es"].append("¿?"),
                                  "q-13-19: accepted 'es' form '¿?' is blank"),
    "order repeats a choice": (lambda d: _q(d, "q-13-27").update(answer=[2, 4, 0, 3, 3]),
                               "question q-13-27 field answer: [2, 4, 0, 3, 3] has non-unique"),
    "order misses a choice": (lambda d: _q(d, "q-13-27").update(answer=[2, 4, 0, 3]),
                              "q-13-27: an order answer lists every choice index once"),
    "order given away": (lambda d: _q(d, "q-13-27").update(answer=[0, 1, 2, 3, 4]),
                         "q-13-27: the choices are already in the right order"),
    "recall without rubric": (lambda d: _q(d, "q-13-28").pop("rubric"),
                              "question q-13-28: 'rubric' is a required property"),
    "rubric on a single": (lambda d: _q(d, "q-13-01").update(rubric=[{"en": "a", "es": "a"}]),
                           "question q-13-01 field rubric"),
    "recall answer not a text": (lambda d: _q(d, "q-13-28").update(answer=True),
                                 "question q-13-28 field answer: True is not of type 'object'"),
    "unknown kind": (lambda d: _q(d, "q-13-01").update(kind="essay"),
                     "question q-13-01 field kind: 'essay' is not one of"),
    "choices on numeric": (lambda d: _q(d, "q-13-15").update(choices=[{"en": "a", "es": "a"}]),
                           "question q-13-15 field choices"),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_validate_reports_broken_quiz(tmp_path, name):
    mutate, expected = BREAKS[name]
    data = _canonical()
    mutate(data)
    _write(tmp_path, data)
    problems = quiz.validate_all(tmp_path)
    assert any(expected in p for p in problems), problems
    assert all(p.startswith(f"{QUIZ_ID}.yaml: ") for p in problems)
    with pytest.raises(ValueError, match="is invalid"):
        quiz.load_quiz(QUIZ_ID, tmp_path)


def test_validate_reports_yaml_syntax_and_file_name(tmp_path):
    (tmp_path / "broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    _write(tmp_path, _canonical(), name="other-name")
    problems = quiz.validate_all(tmp_path)
    assert problems[0].startswith("broken.yaml: not valid YAML")
    assert any("quiz id 'phase-13-embeddings' differs from its file name 'other-name'" in p
               for p in problems)
    assert len(problems) == 2


def test_validate_empty_folder(tmp_path):
    assert quiz.validate_all(tmp_path) == [f"no quiz files (*.yaml) found in {tmp_path}"]


# --- translation hashes ------------------------------------------------------------------


@pytest.fixture
def quiz_copy(tmp_path) -> Path:
    path = tmp_path / CANONICAL.name
    shutil.copy(CANONICAL, path)
    shutil.copytree(CANONICAL.parent / "labelled", tmp_path / "labelled")
    return path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_validate_requires_labelled_answers(quiz_copy):
    shutil.rmtree(quiz_copy.parent / "labelled")
    assert quiz.validate_all(quiz_copy.parent) == [
        f"{QUIZ_ID}.yaml: no labelled answers for its numeric and short questions; "
        f"write labelled/{QUIZ_ID}.yaml"]
