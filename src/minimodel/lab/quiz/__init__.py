"""Bilingual quizzes: YAML content, validation, grading, Markdown mirrors and spaced review.

Typical use::

    from minimodel.lab import quiz
    quiz.list_quizzes()                       # ['phase-13-embeddings']
    q = quiz.load_quiz("phase-13-embeddings")
    quiz.grade(q, {"q-13-01": 3}, "en")             # {'score': 1, 'total': ..., 'results': [...]}
    quiz.validate_all()                       # [] when every quiz file is sound

Modules: :mod:`.schema` (format, JSON schema), :mod:`.loader` (files),
:mod:`.grading` (with :mod:`.numbers` and :mod:`.terms`), :mod:`.text` (answer normal form),
:mod:`.render` (Markdown), :mod:`.review` (Leitner boxes),
:mod:`.session` (progress records and the interactive Rich session).
"""

from __future__ import annotations

from minimodel.lab.quiz.grading import (check_answer, check_answers, grade, is_correct,
                                        numeric_matches, read_answers, read_number)
from minimodel.lab.quiz.numbers import Number, Unreadable
from minimodel.lab.quiz.loader import (CONTENT_DIR, Question, Quiz, list_quizzes, load_all,
                                       load_quiz, quiz_path)
from minimodel.lab.quiz.schema import AUTO_GRADED, KINDS, QUIZ_SCHEMA
from minimodel.lab.quiz.text import canonical_phrase, normalise
from minimodel.lab.quiz.validation import validate_all

__all__ = [
    "AUTO_GRADED", "CONTENT_DIR", "KINDS", "QUIZ_SCHEMA", "Question", "Quiz", "canonical_phrase",
    "check_answer", "check_answers", "grade", "is_correct", "list_quizzes",
    "load_all", "load_quiz", "normalise", "numeric_matches", "quiz_path",
    "Number", "Unreadable", "read_answers", "read_number", "validate_all",
]
