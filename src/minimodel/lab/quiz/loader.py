"""Find, load and validate the quiz YAML files, and the per-lesson quizzes made from them.

The canonical files live in ``minimodel/lab/content/quizzes/<quiz-id>.yaml`` (shipped as package
data). Every lesson whose front matter lists questions (``quiz: [q-13-09, q-13-27]``) is a quiz
too, whose id is the lesson's slug (``lm-head-and-logits``): its questions come from any
file, in the front matter's order. A file named after a lesson (``layer-norm.yaml``) holds
that lesson's new questions; taken by its id, it is the lesson's quiz. Every public function
takes an optional ``content_dir`` so tests and authors can point at another folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minimodel.lab.freshness import without_stamps
from minimodel.lab.i18n import DEFAULT_LANG
from minimodel.lab.items import FOLDERS, item_files, read_yaml, schema_problems
from minimodel.lab.lessons import Lesson, find_lesson, load_lessons
from minimodel.lab.quiz import schema
from minimodel.lab.quiz.numbers import asked_decimals, effective_tolerance
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

CONTENT_DIR = FOLDERS["question"][0]


@dataclass(frozen=True)
class Question:
    """One question. ``answer`` uses the export format (see :mod:`minimodel.lab.quiz.grading`)."""

    id: str
    kind: str
    title: dict[str, str]
    prompt: dict[str, str]
    choices: list[dict[str, str]]
    answer: Any
    explanation: dict[str, str]
    rubric: list[dict[str, str]] = field(default_factory=list)
    path: Path | None = None   # the quiz file that holds it

    def export(self) -> dict[str, Any]:
        """The stable machine-readable form; ``rubric`` only for recall. A numeric answer shows
        the tolerance the grader applies and the decimals the prompt asks for."""
        answer = self.answer
        if self.kind == "numeric":
            answer = {**answer, "tolerance": effective_tolerance(answer, self.prompt)}
            if (decimals := asked_decimals(answer, self.prompt)) is not None:
                answer["decimals"] = decimals
        out = {"id": self.id, "kind": self.kind, "prompt": dict(self.prompt),
               "choices": [dict(c) for c in self.choices], "answer": answer,
               "explanation": dict(self.explanation)}
        if self.rubric:
            out["rubric"] = [dict(r) for r in self.rubric]
        return out


@dataclass(frozen=True)
class Quiz:
    """A loaded, validated quiz."""

    id: str
    title: dict[str, str]
    questions: list[Question]
    path: Path
    description: dict[str, str] = field(default_factory=dict)

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise ValueError(f"quiz {self.id} has no question {qid!r}; "
                         f"its ids are {', '.join(self.ids)}")

    @property
    def ids(self) -> list[str]:
        return [q.id for q in self.questions]

    def export(self) -> dict[str, Any]:
        return {"id": self.id, "questions": [q.export() for q in self.questions]}


def content_folder(content_dir: str | os.PathLike | None) -> Path:
    """``content_dir``, or the quizzes shipped with minimodel."""
    return Path(content_dir) if content_dir is not None else CONTENT_DIR


def quiz_files(content_dir: str | os.PathLike | None = None) -> list[Path]:
    """The quiz YAML files, sorted by name (an empty list when the folder is missing)."""
    return item_files("question", content_folder(content_dir))


def read_checked(path: Path) -> tuple[Any, list[str]]:
    """Parse one file; problems are returned (not raised) so validate can list them all."""
    try:
        data = read_yaml(path)
    except ValueError as exc:
        return None, ["not valid YAML" + str(exc).split("not valid YAML", 1)[1]]
    problems = schema_problems(data, schema.QUIZ_SCHEMA)
    if not problems:
        problems = schema.semantic_problems(data, expected_id=path.stem)
    return data, problems


def build(data: dict[str, Any], path: Path) -> Quiz:
    """A Quiz from parsed YAML that :func:`read_checked` found sound (texts without their
    translation stamps)."""
    data = without_stamps(data)
    questions = [
        Question(id=q["id"], kind=q["kind"], title=q["title"], prompt=q["prompt"],
                 choices=list(q.get("choices") or []), answer=q["answer"],
                 explanation=q["explanation"], rubric=list(q.get("rubric") or []), path=path)
        for q in data["questions"]
    ]
    return Quiz(id=data["id"], title=data["title"], questions=questions, path=path,
                description=data.get("description") or {})


def lesson_quizzes() -> list[Lesson]:
    """The lessons that own questions, in the path's order."""
    return [lesson for lesson in load_lessons() if lesson.quiz]


def list_quizzes(content_dir: str | os.PathLike | None = None) -> list[str]:
    """Ids of the available quizzes: the lessons' (in order), then the other files."""
    lessons = [lesson.stem for lesson in lesson_quizzes()] if content_dir is None else []
    return lessons + [p.stem for p in quiz_files(content_dir) if p.stem not in lessons]


def all_questions(content_dir: str | os.PathLike | None = None) -> dict[str, Question]:
    """Every question of every valid quiz file by id, the first file's when an id repeats
    (the links section of ``minimodel lab validate`` reports the repeat)."""
    questions: dict[str, Question] = {}
    for path in quiz_files(content_dir):
        data, problems = read_checked(path)
        for question in [] if problems else build(data, path).questions:
            questions.setdefault(question.id, question)
    return questions


def _is_lesson(key: str) -> bool:
    """Is ``key`` a lesson with questions (its slug, or a number no file is named)?"""
    if key in [lesson.stem for lesson in lesson_quizzes()]:
        return True
    if key in [p.stem for p in quiz_files()]:
        return False
    try:
        return bool(find_lesson(key).quiz)
    except ValueError:
        return False


def _lesson_number(key: str) -> bool:
    """Is ``key`` a number no quiz file is named (``99``): meant as a lesson's place, so an
    unknown one is answered with the lessons, not with the quiz files' ids."""
    return key.strip().isdigit() and key not in [p.stem for p in quiz_files()]


def lesson_quiz(key: str, *, lang: str = DEFAULT_LANG) -> Quiz:
    """The questions a lesson's front matter lists (``key``: its number on the path or its slug)."""
    lesson = find_lesson(key, lang=lang)  # an unknown one: the error lists the lessons
    questions = all_questions()
    missing = [qid for qid in lesson.quiz if qid not in questions]
    if missing:
        raise ValueError(f"lesson {lesson.stem} lists questions that no quiz file holds: "
                         f"{', '.join(missing)} (run `minimodel lab validate`)")
    if not lesson.quiz:
        known = ", ".join(list_quizzes())
        raise ValueError(say("quiz.error.unknown_quiz", lang, id=key, known=known,
                             command=Suggest(lang)("quiz", "list")))
    titles = {code: lesson.titles.get(code, lesson.titles["en"]) for code in ("en", "es")}
    return Quiz(id=lesson.stem, title=titles, questions=[questions[q] for q in lesson.quiz],
                path=lesson.path())


def quiz_path(quiz_id: str, content_dir: str | os.PathLike | None = None, *,
              lang: str = DEFAULT_LANG) -> Path:
    """Path of the YAML file of ``quiz_id``; ValueError (in ``lang``) listing the known ids
    if missing."""
    for path in quiz_files(content_dir):
        if path.stem == quiz_id:
            return path
    known = ", ".join(list_quizzes(content_dir)) or "(none)"
    raise ValueError(say("quiz.error.unknown_quiz", lang, id=quiz_id, known=known,
                         command=Suggest(lang)("quiz", "list")))


def load_quiz(quiz_id: str, content_dir: str | os.PathLike | None = None, *,
              lang: str = DEFAULT_LANG) -> Quiz:
    """Load and validate one quiz. Stale translation hashes do not block loading.

    ``quiz_id`` is a file's id or a lesson's stem (the lesson's questions). ``lang`` is the
    language of the "unknown quiz" error.
    """
    if content_dir is None and (_is_lesson(quiz_id) or _lesson_number(quiz_id)):
        return lesson_quiz(quiz_id, lang=lang)
    return _load_file(quiz_path(quiz_id, content_dir, lang=lang))


def load_all(content_dir: str | os.PathLike | None = None) -> list[Quiz]:
    """Every quiz file, loaded and validated (the lessons' quizzes are views of them)."""
    return [_load_file(path) for path in quiz_files(content_dir)]


def _load_file(path: Path) -> Quiz:
    data, problems = read_checked(path)
    if problems:
        raise ValueError(f"quiz file {path} is invalid: " + "; ".join(problems)
                         + " (run `minimodel quiz validate` for the full list)")
    return build(data, path)
