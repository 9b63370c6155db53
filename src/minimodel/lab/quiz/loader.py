"""Find, load and validate the quiz YAML files.

The canonical files live in ``minimodel/lab/content/quizzes/<quiz-id>.yaml`` (shipped as package
data). Every public function takes an optional ``content_dir`` so tests and authors can point
at another folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from minimodel._fileio import atomic_write_text
from minimodel.lab.i18n import DEFAULT_LANG
from minimodel.lab.quiz import schema

CONTENT_DIR = Path(__file__).resolve().parents[1] / "content" / "quizzes"


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

    def export(self) -> dict[str, Any]:
        """The stable machine-readable form; ``rubric`` only for recall."""
        out = {"id": self.id, "kind": self.kind, "prompt": dict(self.prompt),
               "choices": [dict(c) for c in self.choices], "answer": self.answer,
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
    folder = content_folder(content_dir)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def read_checked(path: Path) -> tuple[Any, list[str]]:
    """Parse one file; problems are returned (not raised) so validate can list them all."""
    try:
        data = schema.load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        return None, [f"not valid YAML: {exc}".replace("\n", " ")]
    problems = schema.schema_problems(data)
    if not problems:
        problems = schema.semantic_problems(data, expected_id=path.stem)
    return data, problems


def build(data: dict[str, Any], path: Path) -> Quiz:
    """A Quiz from parsed YAML that :func:`read_checked` found sound."""
    questions = [
        Question(id=q["id"], kind=q["kind"], title=q["title"], prompt=q["prompt"],
                 choices=list(q.get("choices") or []), answer=q["answer"],
                 explanation=q["explanation"], rubric=list(q.get("rubric") or []))
        for q in data["questions"]
    ]
    return Quiz(id=data["id"], title=data["title"], questions=questions, path=path,
                description=data.get("description") or {})


def list_quizzes(content_dir: str | os.PathLike | None = None) -> list[str]:
    """Ids of the available quizzes (file names without ``.yaml``)."""
    return [p.stem for p in quiz_files(content_dir)]


def quiz_path(quiz_id: str, content_dir: str | os.PathLike | None = None, *,
              lang: str = DEFAULT_LANG) -> Path:
    """Path of the YAML file of ``quiz_id``; ValueError (in ``lang``) listing the known ids
    if missing."""
    from minimodel.lab.quiz.ui import t

    for path in quiz_files(content_dir):
        if path.stem == quiz_id:
            return path
    known = ", ".join(list_quizzes(content_dir)) or "(none)"
    raise ValueError(t("error.unknown_quiz", lang, id=quiz_id, known=known))


def load_quiz(quiz_id: str, content_dir: str | os.PathLike | None = None, *,
              lang: str = DEFAULT_LANG) -> Quiz:
    """Load and validate one quiz. Stale translation hashes do not block loading.

    ``lang`` is the language of the "unknown quiz" error.
    """
    path = quiz_path(quiz_id, content_dir, lang=lang)
    data, problems = read_checked(path)
    if problems:
        raise ValueError(f"quiz file {path} is invalid: " + "; ".join(problems)
                         + " (run `minimodel quiz validate` for the full list)")
    return build(data, path)


def load_all(content_dir: str | os.PathLike | None = None) -> list[Quiz]:
    """Every quiz, loaded and validated."""
    return [load_quiz(qid, content_dir) for qid in list_quizzes(content_dir)]


def rehash(quiz_id: str, translated: str | None = None, questions: list[str] | None = None,
           content_dir: str | os.PathLike | None = None) -> list[str]:
    """Update the hash lines of a quiz file (atomically); returns the remaining hash problems."""
    path = quiz_path(quiz_id, content_dir)
    data, problems = read_checked(path)
    if problems:
        raise ValueError(f"fix {path.name} before rehashing: " + "; ".join(problems))
    text = path.read_text(encoding="utf-8")
    new_text = schema.rehash_text(text, translated, set(questions) if questions else None)
    if new_text != text:
        atomic_write_text(path, new_text)
    return schema.hash_problems(schema.load_yaml(new_text))
