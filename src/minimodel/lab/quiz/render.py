"""Markdown mirrors of the quizzes: ``docs/quizzes/<quiz-id>.<lang>.md``.

The YAML is the source of truth; the mirrors exist so a quiz can be read on GitHub or in an
editor. ``minimodel quiz render --check`` (and a test) fail when a mirror drifts from the YAML.
"""

from __future__ import annotations

import os
from pathlib import Path

from minimodel._fileio import atomic_write_text
from minimodel.lab.i18n import LANGS, pick
from minimodel.lab.quiz.grading import expected_value
from minimodel.lab.quiz.loader import Question, Quiz, load_all
from minimodel.messages import say

# src/minimodel/lab/quiz/render.py -> parents[4] is the repository root in a source checkout.
REPO_ROOT = Path(__file__).resolve().parents[4]
LANG_NAMES = {"en": "English", "es": "Español"}
CHECK = "✓"


def how_to_answer(question: Question, lang: str) -> str:
    """The line that asks for an answer, e.g. "Your order (all 5 choice numbers, first to
    last, e.g. 2,3,4,5,1)": a put-in-order example has as many numbers as the question has
    choices."""
    n = len(question.choices)
    example = ",".join(str(i) for i in [*range(2, n + 1), 1])
    return say(f"quiz.ask.{question.kind}", lang, count=n, example=example)


def docs_dir() -> Path:
    """``docs/quizzes`` of the source checkout; ValueError when minimodel is installed elsewhere."""
    if (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "src" / "minimodel").is_dir():
        return REPO_ROOT / "docs" / "quizzes"
    raise ValueError(f"no source checkout around {Path(__file__).parent}; pass --out DIR to "
                     "choose where the Markdown mirrors go")


def mirror_name(quiz_id: str, lang: str) -> str:
    return f"{quiz_id}.{lang}.md"


def _source(quiz: Quiz) -> str:
    try:
        return quiz.path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return quiz.path.name  # a quiz outside the checkout (tests, authors' drafts)


def answer_lines(question: Question, lang: str) -> list[str]:
    """Markdown lines that show the expected answer: choices with the right ones ticked, the
    right order, the value, the accepted forms, or a recall question's model answer."""
    kind = question.kind
    if kind in ("single", "multi"):
        right = {question.answer} if kind == "single" else set(question.answer)
        return [f"{i + 1}. {pick(c, lang)}" + (f" {CHECK}" if i in right else "")
                for i, c in enumerate(question.choices)]
    if kind == "order":
        return [f"{i + 1}. {pick(c, lang)}" for i, c in enumerate(question.choices)] + [
            "", f"{say('quiz.right_order', lang)}: **"
            + ", ".join(str(i + 1) for i in question.answer) + f"** {CHECK}"]
    if kind == "numeric":
        return [f"{say('quiz.value', lang)}: {bare_answer(question, lang)} {CHECK}"]
    if kind == "short":
        return [f"{say('quiz.accepted', lang)}: {bare_answer(question, lang)} {CHECK}"]
    return [f"{say('quiz.model_answer', lang)}: {pick(question.answer, lang).strip()}", "",
            f"{say('quiz.rubric', lang)}:", ""] + rubric_lines(question, lang)


def bare_answer(question: Question, lang: str) -> str:
    """A numeric or short question's answer in bold, with no label: the value, or the
    accepted forms (this language's first) joined by ' · '. Labelled by its caller, once."""
    if question.kind == "numeric":
        return f"**{expected_value(question, lang)}**"
    forms = question.answer[lang] + [f for code in LANGS if code != lang
                                     for f in question.answer[code]]
    return " · ".join(f"**{f}**" for f in dict.fromkeys(forms))


def rubric_lines(question: Question, lang: str) -> list[str]:
    """The points a full answer to a recall question makes, as a Markdown list."""
    return [f"- {pick(point, lang)}" for point in question.rubric]


def question_markdown(question: Question, lang: str, level: int = 2) -> str:
    """One question as Markdown: heading with id, title and kind; prompt; answers; explanation."""
    kind = say(f"quiz.kind.{question.kind}", lang)
    lines = [f"{'#' * level} {question.id} — {pick(question.title, lang)} ({kind})", "",
             pick(question.prompt, lang).strip(), ""]
    lines += answer_lines(question, lang)
    lines += ["", f"**{say('quiz.explanation', lang)}.** "
              f"{pick(question.explanation, lang).strip()}", ""]
    return "\n".join(lines)


def render_quiz(quiz: Quiz, lang: str) -> str:
    """The full Markdown mirror of ``quiz`` in ``lang``."""
    links = " · ".join(f"[{LANG_NAMES.get(code, code)}]({mirror_name(quiz.id, code)})"
                       for code in LANGS)
    source = _source(quiz)
    parts = [f"<!-- {say('quiz.mirror_note', 'en', source=source)} -->",
             f"# {pick(quiz.title, lang)}", "", links, "",
             f"> {say('quiz.mirror_note', lang, source=source)}", ""]
    if quiz.description:
        parts += [pick(quiz.description, lang).strip(), ""]
    body = "\n".join(parts) + "\n" + "\n".join(question_markdown(q, lang) for q in quiz.questions)
    return body.rstrip("\n") + "\n"


def rendered(content_dir: str | os.PathLike | None = None,
             langs: tuple[str, ...] = LANGS) -> dict[str, str]:
    """File name -> Markdown text for every quiz and language."""
    return {mirror_name(quiz.id, lang): render_quiz(quiz, lang)
            for quiz in load_all(content_dir) for lang in langs}


def write_mirrors(out_dir: str | os.PathLike, content_dir: str | os.PathLike | None = None,
                  langs: tuple[str, ...] = LANGS) -> list[Path]:
    """Write the mirrors that changed (atomically); returns the paths written."""
    out_dir = Path(out_dir)
    written = []
    for name, text in rendered(content_dir, langs).items():
        path = out_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            atomic_write_text(path, text)
            written.append(path)
    return written


def drift(out_dir: str | os.PathLike, content_dir: str | os.PathLike | None = None,
          langs: tuple[str, ...] = LANGS) -> list[str]:
    """Problems with the mirrors in ``out_dir``: missing, out of date, or orphaned files."""
    out_dir = Path(out_dir)
    expected = rendered(content_dir, langs)
    problems = []
    for name, text in expected.items():
        path = out_dir / name
        if not path.is_file():
            problems.append(f"{path} is missing")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{path} differs from the YAML")
    if out_dir.is_dir():
        for path in sorted(out_dir.glob("*.md")):
            lang = path.suffixes[-2].lstrip(".") if len(path.suffixes) >= 2 else ""
            if lang in langs and path.name not in expected:
                problems.append(f"{path} has no quiz YAML behind it; delete it")
    return problems
