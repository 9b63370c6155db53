"""``NOTES.md``: the predictions a learner writes before running a break's experiment.

Predicting first is the point of a break: a wrong prediction that meets a real symptom is what
sticks. ``minimodel break run`` therefore looks for text under every "Prediction N" heading
(blockquoted questions, HTML comments and blank lines do not count) and refuses to run until
each one has some: at least one letter or digit (invisible characters such as a zero-width
space, and punctuation alone, are not a prediction).
"""

from __future__ import annotations

import os
import re
import textwrap
import unicodedata

from minimodel.lab.breaks.catalog import Break
from minimodel.lab.suggest import Suggest, break_commands
from minimodel.messages import say

_PREDICTION = re.compile(r"^##\s+(?:Prediction|Predicci[oó]n)\s+(\d+)\b", re.IGNORECASE)
_ANY_HEADING = re.compile(r"^#{1,2}\s")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)

WIDTH = 92


def _wrap(text: str) -> str:
    return textwrap.fill(" ".join(text.split()), width=WIDTH)


def _quote(text: str) -> str:
    lines = textwrap.wrap(" ".join(text.split()), width=WIDTH - 2)
    return "\n".join(f"> {line}".rstrip() for line in lines)


def render_notes(brk: Break, lang: str, workdir: str,
                 learner_dir: str | os.PathLike | None = None) -> str:
    """The initial NOTES.md of a workspace, in ``lang``; the commands it names carry the
    learner folder ``learner_dir``."""
    commands = break_commands(Suggest(lang, learner_dir), workdir)

    def note(key: str) -> str:
        return say(f"break.notes.{key}", lang, **commands)

    parts = [f"# {brk.text('title', lang)} (`{brk.id}`)", "", _wrap(brk.text("intro", lang)), "",
             _wrap(note("how")), ""]
    for i, question in enumerate(brk.texts("predict", lang), 1):
        parts += [f"## {say('break.prediction', lang)} {i}", "", _quote(question), "",
                  note("placeholder"), ""]
    parts += [f"## {note('observed')}", "", note("observed_hint"), "",
              f"## {note('fix')}", "", note("fix_hint"), ""]
    return "\n".join(parts)


def prediction_answers(notes: str) -> dict[int, str]:
    """Prediction number -> what the learner wrote under it (questions and comments removed)."""
    answers: dict[int, list[str]] = {}
    current: int | None = None
    for line in _COMMENT.sub("", notes).splitlines():
        match = _PREDICTION.match(line)
        if match:
            current = int(match.group(1))
            answers.setdefault(current, [])
            continue
        if _ANY_HEADING.match(line):
            current = None
            continue
        if current is not None and line.strip() and not line.lstrip().startswith(">"):
            answers[current].append(line.strip())
    return {n: "\n".join(lines) for n, lines in answers.items()}


def is_written(text: str) -> bool:
    """Does ``text`` say anything: at least one letter or digit (Unicode categories L*, N*)?"""
    return any(unicodedata.category(ch)[0] in "LN" for ch in text)


def missing_predictions(notes: str, count: int) -> list[int]:
    """Numbers (1-based) of the predictions that are absent or say nothing (:func:`is_written`)."""
    answers = prediction_answers(notes)
    return [n for n in range(1, count + 1) if not is_written(answers.get(n, ""))]


def with_predictions(notes: str, predictions: dict[int, str]) -> str:
    """``notes`` with the learner's text under each "Prediction N" heading of ``predictions``.

    What was written under those headings before is replaced; the quoted question, HTML
    comments and every other section are kept as they were.
    """
    out: list[str] = []
    current: int | None = None

    def close_section() -> None:
        if current in predictions:
            while out and not out[-1].strip():
                out.pop()
            out.extend(["", " ".join(predictions[current].split()), ""])

    for line in notes.splitlines():
        match = _PREDICTION.match(line)
        if match or _ANY_HEADING.match(line):
            close_section()
            current = int(match.group(1)) if match else None
            out.append(line)
            continue
        stripped = line.strip()
        keep = (current not in predictions or not stripped or stripped.startswith(">")
                or not _COMMENT.sub("", stripped).strip())
        if keep:
            out.append(line)
    close_section()
    return "\n".join(out).rstrip("\n") + "\n"
