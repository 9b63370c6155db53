"""The line that asks for an answer fits the question: a put-in-order example has as many
numbers as the question has choices (a five-item question once showed "e.g. 3,1,2,4")."""

from __future__ import annotations

import re

import pytest

from minimodel.lab.quiz.loader import load_all
from minimodel.lab.quiz.render import how_to_answer

ORDER_QUESTIONS = [q for quiz in load_all() for q in quiz.questions if q.kind == "order"]


def test_there_are_order_questions_to_check():
    assert len({len(q.choices) for q in ORDER_QUESTIONS}) >= 1


@pytest.mark.parametrize("lang", ["en", "es"])
def test_an_order_example_names_every_choice_once(lang):
    for question in ORDER_QUESTIONS:
        line = how_to_answer(question, lang)
        n = len(question.choices)
        example = re.search(r"(\d+(?:,\d+)+)\)$", line).group(1)
        assert sorted(int(x) for x in example.split(",")) == list(range(1, n + 1)), line
        assert f" {n} " in line
