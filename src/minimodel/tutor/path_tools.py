"""The path: where the learner is, what comes next, a lesson's text and runnable code.

The same functions as ``minimodel lab status|next|done``: :mod:`minimodel.lab.overview` and
:mod:`minimodel.lab.path` decide what is done and what is next.
"""

from __future__ import annotations

from typing import Any

from minimodel.lab import path as learning_path
from minimodel.lab.lessons import code_blocks, find_lesson, split_front_matter
from minimodel.lab.overview import status
from minimodel.lab.suggest import Suggest
from minimodel.messages import say
from minimodel.tutor.learner import Learner

# The tool that carries each kind of step (what the assistant calls next).
STEP_TOOL = {"lesson": "read_lesson", "quiz": "quiz_question", "break": "break_start",
             "exercise": "exercise_show"}


def lab_status(learner: Learner, lang: str | None = None) -> dict[str, Any]:
    """``lab status --json``: the path lesson by lesson, the totals and the next step."""
    return status(learner.learner_dir, learner.pick_lang(lang))


def next_step(learner: Learner, lang: str | None = None, skip: bool = False) -> dict[str, Any]:
    """What ``lab next`` would start: a lesson asked for again counts as read (moving on);
    ``skip`` passes the pending step. A lesson step is marked opened, as ``lab next`` does."""
    lang = learner.pick_lang(lang)
    progress = learner.progress()
    step, moved_on, skipped = learning_path.advance(progress, skip=skip)
    report: dict[str, Any] = {"moved_on": moved_on.id if moved_on else None,
                              "skipped": skipped.key if skipped else None, "step": None}
    if step is None:
        revealed = learning_path.revealed_steps(progress)
        report["revealed"] = [s.key for s in revealed]   # done after viewing the answer
        review = Suggest(lang, progress.learner_dir)("quiz", "review")
        report["say"] = say("lab.path_done", lang, command=review) + (
            " " + learning_path.revealed_summary(revealed, lang) if revealed else "")
        return report
    if learning_path.is_skipped(progress, step):  # every other step is done: skipped ones again
        report["open"] = [s.key for s in learning_path.open_steps(progress)]
    if step.kind == "lesson":
        learning_path.mark(progress, step, "opened")
    lesson = step.lesson
    report["step"] = {"kind": step.kind, "id": step.id, "lesson": lesson.stem,
                      "lesson_title": lesson.titles.get(lang, lesson.titles["en"]),
                      "tool": STEP_TOOL[step.kind]}
    report["say"] = say(f"tutor.next.{step.kind}", lang, id=step.id, tool=STEP_TOOL[step.kind])
    return report


def read_lesson(learner: Learner, lesson: str, lang: str | None = None) -> dict[str, Any]:
    """A lesson's text (Markdown, front matter removed) and its runnable ``python`` blocks,
    each with the output the lesson shows for it (checked on every build)."""
    lang = learner.pick_lang(lang)
    found = find_lesson(str(lesson), lang=lang)
    source = found.path(lang)
    source = source if source.is_file() else found.path("en")
    _, body = split_front_matter(source.read_text(encoding="utf-8"))
    blocks = [{"line": block.line, "code": block.code, "output": block.expected}
              for block in code_blocks(body)]
    return {"lesson": found.stem, "title": found.titles.get(lang, found.titles["en"]),
            "lang": lang, "markdown": body.strip() + "\n", "code": blocks,
            "items": {"quiz": len(found.quiz), "breaks": found.breaks,
                      "exercises": found.exercises}}


def mark_lesson_read(learner: Learner, lesson: str, lang: str | None = None) -> dict[str, Any]:
    """``lab done LESSON``: the lesson (number, slug or stem) is read."""
    lang = learner.pick_lang(lang)
    step = learning_path.mark_read(learner.progress(), str(lesson), lang)
    return {"lesson": step.id, "status": "read", "say": say("lab.moved_on", lang, stem=step.id)}
