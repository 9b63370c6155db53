"""Grading of every question kind, answer checking, and the Leitner review order."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from minimodel.lab import quiz
from minimodel.lab.quiz import grading, review
from minimodel.lab.quiz.loader import Question, Quiz


def _text(s: str) -> dict[str, str]:
    return {"en": s, "es": s}


def make(kind: str, answer, n_choices: int = 4, qid: str = "q-99-01") -> Question:
    with_choices = kind in ("single", "multi", "order")
    choices = [_text(f"c{i}") for i in range(n_choices)] if with_choices else []
    rubric = [_text("point one"), _text("point two")] if kind == "recall" else []
    return Question(id=qid, kind=kind, title=_text("t"), prompt=_text("p"), choices=choices,
                    answer=answer, explanation=_text("e"), rubric=rubric)


def test_single():
    q = make("single", 2)
    assert quiz.is_correct(q, 2) is True
    assert quiz.is_correct(q, 1) is False
    with pytest.raises(TypeError, match="q-99-01 is a single-choice question"):
        quiz.is_correct(q, True)          # a bool is not an index
    with pytest.raises(ValueError, match="choice index 4 is out of range; use 0..3"):
        quiz.is_correct(q, 4)


def test_multi_ignores_order_and_repeats_but_not_missing_choices():
    q = make("multi", [0, 1, 3])
    assert quiz.is_correct(q, [3, 0, 1]) is True
    assert quiz.is_correct(q, [0, 0, 1, 3]) is True
    assert quiz.is_correct(q, [0, 1]) is False
    assert quiz.is_correct(q, [0, 1, 2, 3]) is False
    with pytest.raises(TypeError, match="list of 0-based indices"):
        quiz.is_correct(q, 1)


def test_order_must_be_the_exact_sequence():
    q = make("order", [2, 0, 3, 1])
    assert quiz.is_correct(q, [2, 0, 3, 1]) is True
    assert quiz.is_correct(q, [2, 0, 1, 3]) is False          # two swapped
    assert quiz.is_correct(q, [1, 3, 0, 2]) is False          # reversed
    for bad in ([2, 0, 3], [2, 0, 3, 3], [2, 0, 3, 4], 2, [True, 0, 3, 1]):
        with pytest.raises(ValueError, match="q-99-01 is an ordering question"):
            quiz.is_correct(q, bad)


SHORT = {"en": ["effective rank", "erank", "r_eff"], "es": ["rango efectivo"]}


@pytest.mark.parametrize("typed", ["effective rank", "The Effective-Rank.", "  EFFECTIVE\nrank ",
                                   "el rango efectivo", "rángo efectivo", "R_eff", "erank",
                                   "effective rank (erank)", "rango efectivo / effective rank"])
def test_short_accepts_every_form_in_either_language(typed):
    assert quiz.is_correct(make("short", SHORT), typed) is True


@pytest.mark.parametrize("typed", ["rank", "not effective rank", "(not) effective rank",
                                   "effective rank? no", "ineffective rank", "effective",
                                   "the rank is effective", "no es el rango efectivo",
                                   "effective rank or stable rank"])
def test_short_refuses_negations_and_words_inside_other_claims(typed):
    assert quiz.is_correct(make("short", SHORT), typed) is False


def test_short_needs_a_word():
    with pytest.raises(TypeError, match="short-answer question"):
        quiz.is_correct(make("short", SHORT), " ?! ")
    assert grading.normalise("  Ñandú  ÉXITO ") == "nandu exito"
    assert quiz.canonical_phrase("  The  Ñandú-ÉXITO! ") == "nandu exito"


def test_recall_is_the_learners_own_mark():
    q = make("recall", _text("model answer"))
    for yes in (True, "y", "yes", "s", "sí", "SI", {"recalled": True}, _text("model answer")):
        assert quiz.is_correct(q, yes) is True
    for no in (False, "n", "no", {"recalled": False}):
        assert quiz.is_correct(q, no) is False
    with pytest.raises(TypeError, match="recall question"):
        quiz.is_correct(q, "maybe")


@pytest.mark.parametrize("given_value, expected", [
    (6.238, True), (6.248, True), (6.228, True),   # the edges are inside
    (6.2481, False), (6.2279, False), (6, False), (7, False),
])
def test_numeric_tolerance_edges(given_value, expected):
    assert quiz.is_correct(make("numeric", {"value": 6.238, "tolerance": 0.01}),
                           given_value) is expected


def test_numeric_zero_tolerance_and_types():
    q = make("numeric", {"value": 2097152, "tolerance": 0})
    assert quiz.is_correct(q, 2097152) and quiz.is_correct(q, 2097152.0)
    assert not quiz.is_correct(q, 2097153)
    assert quiz.is_correct(q, {"value": 2097152, "tolerance": 0})   # the exported form
    with pytest.raises(ValueError, match="finite"):
        quiz.is_correct(q, float("nan"))
    with pytest.raises(TypeError, match="numeric question"):
        quiz.is_correct(q, [2097152])


@pytest.mark.parametrize("typed, value", [
    ("2,097,152", 2097152), ("2.097.152", 2097152), ("2 097 152", 2097152),
    ("2\u202f097\u202f152", 2097152), ("6,238", 6.238), ("6.238", 6.238), ("4 rows", 4),
    ("cuatro filas", 4), ("Four", 4), ("veinte", 20), ("8192 * 256", 2097152),
    ("8192 × 256", 2097152), ("2^21", 2097152), ("ln 512", 6.238), ("-ln(1/512)", 6.238),
    ("≈ 6,24", 6.24), ("50%", 50), ("4e3", 4000),
])
def test_numbers_are_read_the_way_people_write_them(typed, value):
    q = make("numeric", {"value": value, "tolerance": 0.001})
    assert quiz.is_correct(q, typed) is True


@pytest.mark.parametrize("typed", ["4 or 5", "not 4", "four or five", "1, 3, 7, 9", "no 4",
                                   "4 and 8", "", "inf", "nan", "9^9^9", "__import__('os')",
                                   "(1)(2)", "exp(1000)", "ln(0)", "1/0", "x + 1"])
def test_text_that_is_not_one_number_is_refused(typed):
    with pytest.raises(ValueError, match="not one number"):
        quiz.check_answer(make("numeric", {"value": 4, "tolerance": 0}), typed)


def test_ambiguous_separators_take_the_reading_on_the_questions_scale():
    assert quiz.is_correct(make("numeric", {"value": 65536, "tolerance": 0}), "65,536")
    assert quiz.is_correct(make("numeric", {"value": 65.536, "tolerance": 0}), "65,536")
    assert not quiz.is_correct(make("numeric", {"value": 2097152, "tolerance": 0}), "2,097")


def test_grade_counts_missing_as_wrong_and_keeps_recall_apart():
    q = quiz.load_quiz("phase-13-embeddings")
    answers = {x.id: x.export()["answer"] for x in q.questions}   # the exported key
    report = quiz.grade(q, answers)
    graded = [x for x in q.questions if x.kind in quiz.AUTO_GRADED]
    assert report["score"] == report["total"] == len(graded) < len(q.questions)
    assert report["recall"]["answered"] == report["recall"]["recalled"] == \
        len(q.questions) - len(graded)
    del answers["q-13-02"]
    answers["q-13-28"] = False
    report = quiz.grade(q, answers)
    assert report["score"] == len(graded) - 1
    assert [r["id"] for r in report["results"] if not r["correct"]] == ["q-13-02"]
    assert {"id": "q-13-28", "recalled": False} in report["recall"]["results"]
    assert grading.outcomes(report)["q-13-28"] is False


def test_labelled_answers_all_grade_as_labelled():
    """Every answer a person labelled right is right, every one labelled wrong is not."""
    q = quiz.load_quiz("phase-13-embeddings")
    path = quiz.CONTENT_DIR / "labelled" / "phase-13-embeddings.yaml"
    labelled = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert grading.labelled_problems(q, labelled) == []
    counted = sum(len(sets[label]) for by_lang in labelled["answers"].values()
                  for sets in by_lang.values() for label in ("correct", "wrong"))
    assert counted >= 7 * 2 * 2 * 8


def test_labelled_problems_catch_a_mislabelled_answer():
    q = quiz.load_quiz("phase-13-embeddings")
    labelled = {"answers": {"q-13-19": {"en": {"correct": ["rank"] * 8,
                                               "wrong": ["effective rank"] + ["x"] * 7}}}}
    problems = grading.labelled_problems(q, labelled)
    assert "q-13-19 (en): 'rank' is labelled correct but grades as wrong" in problems
    assert "q-13-19 (en): 'effective rank' is labelled wrong but grades as right" in problems
    assert any(p.startswith("q-13-03: no labelled answers") for p in problems)


def test_check_answers_names_every_problem():
    q = quiz.load_quiz("phase-13-embeddings")
    with pytest.raises(ValueError) as info:
        quiz.check_answers(q, {"q-13-99": 1, "nope": 2, "q-13-01": "x", "q-13-05": [9]})
    message = str(info.value)
    for part in ("unknown question ids q-13-99, nope", "q-13-01 is a single-choice",
                 "q-13-05: choice index 9 is out of range"):
        assert part in message


def test_read_answers_json_yaml_and_errors(tmp_path: Path):
    (tmp_path / "a.json").write_text(json.dumps({"q-13-01": 1}))
    (tmp_path / "a.yaml").write_text("q-13-01: 1\nq-13-05: [0, 1, 3]\n")
    (tmp_path / "list.json").write_text("[1, 2]")
    assert quiz.read_answers(tmp_path / "a.json") == {"q-13-01": 1}
    assert quiz.read_answers(tmp_path / "a.yaml") == {"q-13-01": 1, "q-13-05": [0, 1, 3]}
    with pytest.raises(ValueError, match="must hold a mapping"):
        quiz.read_answers(tmp_path / "list.json")
    with pytest.raises(ValueError, match="cannot read answers file"):
        quiz.read_answers(tmp_path / "missing.json")


# --- Leitner review ---------------------------------------------------------------------


def _quiz(n: int) -> Quiz:
    return Quiz(id="t", title=_text("t"), path=Path("t.yaml"),
                questions=[make("single", 0, qid=f"q-99-{i:02d}") for i in range(1, n + 1)])


def test_review_queue_puts_missed_first():
    today = dt.date(2025, 3, 10)
    boxes = {"q-99-01": {"box": 3, "due": "2025-03-09"},   # interval over
             "q-99-02": {"box": 2, "due": "2025-03-12"},   # not due yet
             "q-99-04": {"box": 1, "due": "2025-03-10"},   # missed
             "q-99-05": {"box": 1, "due": "2025-03-08"}}   # missed earlier
    queue = review.review_queue(_quiz(5), boxes, on=today)
    assert [(i["id"], i["reason"]) for i in queue] == [
        ("q-99-05", "missed"), ("q-99-04", "missed"), ("q-99-03", "new"), ("q-99-01", "due")]
    everything = review.review_queue(_quiz(5), boxes, on=today, include_all=True)
    assert [i["id"] for i in everything][-1] == "q-99-02"


def test_leitner_moves():
    day = dt.date(2025, 3, 10)
    assert review.move(None, True, day) == {"box": 2, "due": "2025-03-11"}
    assert review.move({"box": 4, "due": "x"}, True, day) == {"box": 5, "due": "2025-03-24"}
    assert review.move({"box": 5, "due": "x"}, True, day)["box"] == 5
    assert review.move({"box": 4, "due": "x"}, False, day) == {"box": 1, "due": "2025-03-10"}
    boxes = review.update_boxes({"a": {"box": 3, "due": "x"}}, {"b": False}, day)
    assert boxes == {"a": {"box": 3, "due": "x"}, "b": {"box": 1, "due": "2025-03-10"}}
