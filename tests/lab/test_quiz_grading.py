"""Grading of every question kind, answer checking, and the Leitner review order."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from minimodel.lab import quiz
from minimodel.lab.quiz import grading, review
from minimodel.lab.quiz.loader import Question, Quiz


def _text(s: str) -> dict[str, str]:
    return {"en": s, "es": s}


def make(kind: str, answer, n_choices: int = 4, qid: str = "q-99-01") -> Question:
    choices = [_text(f"c{i}") for i in range(n_choices)] if kind in ("single", "multi") else []
    return Question(id=qid, kind=kind, title=_text("t"), prompt=_text("p"), choices=choices,
                    answer=answer, explanation=_text("e"))


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


def test_free_is_case_and_accent_insensitive():
    q = make("free", [["colapso"]])
    assert quiz.is_correct(q, "colápso")
    assert quiz.is_correct(q, "El embedding COLAPSÓ por completo")
    assert not quiz.is_correct(q, "nada raro")
    assert grading.normalise("  Ñandú  ÉXITO ") == "nandu exito"


def test_free_is_an_and_of_ors_matching_at_word_starts():
    q = make("free", [["repeat", "repit"], ["accumul", "acumul"]])
    assert quiz.is_correct(q, "ids repeat, so updates accumulate")
    assert quiz.is_correct(q, "Los ids se repiten y hay que acumular")
    assert not quiz.is_correct(q, "ids repeat")                 # second group missing
    assert not quiz.is_correct(make("free", [["rank"]]), "frank")  # not at a word start
    assert quiz.is_correct(make("free", [["effective rank"]]), "the  Effective\nrank")


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
    with pytest.raises(TypeError, match="numeric question"):
        quiz.is_correct(q, "2097152")
    with pytest.raises(ValueError, match="finite"):
        quiz.is_correct(q, float("nan"))


@given(st.text(min_size=1, max_size=30))
def test_any_text_matches_itself_as_keyword(text):
    if grading.normalise(text):
        assert grading.keyword_in(text, text)
        assert grading.normalise(grading.normalise(text)) == grading.normalise(text)


def _canonical_answers() -> dict:
    q = quiz.load_quiz("phase-13-embeddings")
    out = {}
    for question in q.questions:
        a = question.answer
        out[question.id] = (" ".join(group[0] for group in a) if question.kind == "free"
                            else a["value"] if question.kind == "numeric" else a)
    return out


def test_grade_counts_missing_as_wrong():
    q = quiz.load_quiz("phase-13-embeddings")
    answers = _canonical_answers()
    assert quiz.grade(q, answers)["score"] == len(q.questions)
    del answers["q-13-02"]
    report = quiz.grade(q, answers)
    assert report["score"] == len(q.questions) - 1
    assert [r["id"] for r in report["results"] if not r["correct"]] == ["q-13-02"]


def test_learner_style_free_answers_on_canonical_quiz():
    q = quiz.load_quiz("phase-13-embeddings")
    good = {"q-13-04": "Un id puede repetirse y hay que acumular todas las contribuciones",
            "q-13-10": "It is tied to the input embedding wte",
            "q-13-19": "Rango efectivo",
            "q-13-21": "the embedding collapsed into a few directions"}
    bad = {"q-13-04": "because it is faster", "q-13-10": "it is hidden",
           "q-13-19": "the norm", "q-13-21": "it is fine"}
    assert all(quiz.is_correct(q.question(k), v) for k, v in good.items())
    assert not any(quiz.is_correct(q.question(k), v) for k, v in bad.items())


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
