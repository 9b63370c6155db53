"""The learning path: lesson → its questions → its breaks → its exercises, lessons in order.

Each lesson contributes, in this order, a ``lesson`` step (read it), a ``quiz`` step (its
questions, taken as the quiz whose id is the lesson's stem), one ``break`` step per break and
one ``exercise`` step per exercise its front matter lists. A step is *done* when:

* lesson: marked read (``minimodel lab done 05``, or by moving on: a second ``lab next``);
* quiz: taken to the end once (every question shown and graded; the score is kept apart,
  a quiz is not "done" only when perfect);
* break: fixed (``break check`` passed);
* exercise: passed (``exercise check`` passed).

A break fixed after ``break diff`` or an exercise passed after ``exercise solution`` is done
too (nobody is stuck behind a step they gave up on), and its state says ``revealed``, so
every view shows and counts it apart (:mod:`minimodel.lab.revealed`).

A step can also be skipped (``lab next --skip``), so the path never blocks; a skipped step is
not done. Once every other step is done, ``lab next`` offers the skipped steps again, the
least-skipped first (then in path order), so skipping one again brings up the next; the path
is complete only when every step is done. Lesson reads and skips are stored in the learner
folder's ``progress/path.json`` under ``"<kind>:<id>"`` (a skip also counts ``skips``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minimodel.lab.i18n import status_label
from minimodel.lab.lessons import FRONT_MATTER
from minimodel.lab.lessons import Lesson, find_lesson, load_lessons
from minimodel.lab.progress import Progress
from minimodel.lab.quiz.loader import all_questions
from minimodel.lab.quiz.schema import AUTO_GRADED
from minimodel.lab.revealed import is_revealed, shown
from minimodel.messages import say

STEP_KINDS = ("lesson", "quiz", "break", "exercise")
# What "done" means per kind, as recorded by each command.
DONE_STATUS = {"lesson": "read", "break": "fixed", "exercise": "passed"}


@dataclass(frozen=True)
class Step:
    """One step of the path; ``id`` is the lesson stem for lesson and quiz steps."""

    kind: str
    id: str
    lesson: Lesson

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"


def steps(lessons: list[Lesson] | None = None) -> list[Step]:
    """Every step of the path, in order."""
    out = []
    for lesson in load_lessons() if lessons is None else lessons:
        out.append(Step("lesson", lesson.stem, lesson))
        if lesson.quiz:
            out.append(Step("quiz", lesson.stem, lesson))
        for kind in ("break", "exercise"):
            out += [Step(kind, item_id, lesson) for item_id in getattr(lesson, FRONT_MATTER[kind])]
    return out


def state(step: Step, progress: Progress,
          questions: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"status", "done", "skipped"}`` plus, for a quiz, ``attempts``, ``right`` (best
    take), ``total`` (the graded questions) and ``questions`` (all, self-marked recall too);
    for a break or an exercise, ``revealed`` (done after viewing the answer).

    ``questions`` is :func:`all_questions` when the caller walks many steps: reading and
    checking every quiz file once per quiz step made ``lab status`` take seconds.
    """
    marks = progress.get("path", step.key) or {}
    if step.kind == "lesson":
        status = marks.get("status", "not started")
        out: dict[str, Any] = {"status": status, "done": status == "read"}
    elif step.kind == "quiz":
        record = progress.get("quiz", step.id) or {}
        attempts = int(record.get("attempts", 0))
        out = {"status": "taken" if attempts else record.get("status", "not started"),
               "done": attempts > 0, "attempts": attempts, "right": record.get("best_score"),
               "total": record.get("total", _graded(step.lesson.quiz, questions)),
               "questions": len(step.lesson.quiz)}
    else:
        entry = progress.get(step.kind, step.id) or {}
        status = entry.get("status", "not started")
        out = {"status": status, "done": status == DONE_STATUS[step.kind],
               "revealed": is_revealed(step.kind, entry)}
    out["skipped"] = not out["done"] and marks.get("status") == "skipped"
    return out


def _graded(question_ids: list[str], questions: dict[str, Any] | None = None) -> int:
    """How many of these questions are graded (recall questions are self-marked)."""
    questions = all_questions() if questions is None else questions
    return sum(questions[q].kind in AUTO_GRADED for q in question_ids if q in questions)


def open_steps(progress: Progress, lessons: list[Lesson] | None = None) -> list[Step]:
    """Every step not done, in the order ``lab next`` offers them: the steps never skipped in
    path order, then the skipped ones, least-skipped first and in path order among equals."""
    questions = all_questions()
    fresh, skipped = [], []
    for place, step in enumerate(steps(lessons)):
        found = state(step, progress, questions)
        if found["skipped"]:
            skips = int((progress.get("path", step.key) or {}).get("skips", 1))
            skipped.append((skips, place, step))
        elif not found["done"]:
            fresh.append(step)
    return fresh + [step for _, _, step in sorted(skipped, key=lambda s: s[:2])]


def pending(progress: Progress, lessons: list[Lesson] | None = None) -> Step | None:
    """The step ``lab next`` offers: the first one neither done nor skipped, else the skipped
    step skipped the fewest times (None only when every step is done)."""
    waiting = open_steps(progress, lessons)
    return waiting[0] if waiting else None


def revealed_steps(progress: Progress) -> list[Step]:
    """The breaks and exercises of the path done after viewing the answer, in path order."""
    return [step for step in steps() if step.kind in ("break", "exercise")
            and is_revealed(step.kind, progress.get(step.kind, step.id))]


def revealed_summary(revealed: list[Step], lang: str) -> str:
    """"14 of 14 steps done, 2 of them after viewing the answer: break X (fixed after viewing
    the fix), ..." for the end of the path."""
    total = len(steps())
    labels = [status_label(shown(DONE_STATUS[step.kind], True), lang) for step in revealed]
    named = ", ".join(f"{step.kind} {step.id} ({label})" for step, label in zip(revealed, labels))
    return say("lab.path_done_revealed", lang, done=total, total=total, revealed=len(revealed),
               steps=named)


def is_skipped(progress: Progress, step: Step) -> bool:
    """Was ``step`` skipped (and not done since)?"""
    return bool(state(step, progress)["skipped"])


def advance(progress: Progress, skip: bool = False) -> tuple[Step | None, Step | None,
                                                             Step | None]:
    """What asking for the next step does (``lab next``): a lesson already opened is marked
    read (asking for the next step = moving on); with ``skip`` the pending step is marked
    skipped. Returns (the step now pending or None at the end, the lesson moved on from,
    the step skipped)."""
    moved_on = skipped = None
    step = pending(progress)
    if step is not None and step.kind == "lesson" and \
            (progress.get("path", step.key) or {}).get("status") == "opened":
        mark(progress, step, "read")
        moved_on, step = step, pending(progress)
    if step is not None and skip:
        mark(progress, step, "skipped")
        skipped, step = step, pending(progress)
    return step, moved_on, skipped


def mark(progress: Progress, step: Step, status: str) -> None:
    """Record ``status`` (``opened``, ``read``, ``skipped``) for a step in ``path.json``; a
    skip also counts how many times the step was skipped."""
    if status == "skipped":
        skips = int((progress.get("path", step.key) or {}).get("skips", 0))
        progress.record("path", step.key, status, skips=skips + 1)
    else:
        progress.record("path", step.key, status)


def mark_read(progress: Progress, key: str, lang: str = "en") -> Step:
    """``lab done LESSON``: the lesson (its number on the path or its slug) is read."""
    lesson = find_lesson(key, lang=lang)
    step = Step("lesson", lesson.stem, lesson)
    mark(progress, step, "read")
    return step


def reading_place(lesson: Lesson, lang: str, site_dir: Path = Path("site")) -> Path:
    """Where to read a lesson: the built site's page when there is one, else the source."""
    prefix = site_dir / "es" if lang == "es" else site_dir
    for page in (prefix / "lessons" / lesson.stem / "index.html",
                 prefix / "lessons" / f"{lesson.stem}.html"):
        if page.is_file():
            return page.resolve()
    source = lesson.path(lang)
    return source if source.is_file() else lesson.path("en")


def work_place(progress: Progress, step: Step) -> Path:
    """The default folder of a break (``<learner dir>/work/breaks/<id>``) or the starter file
    of an exercise (``<learner dir>/work/exercises/<id>.py``)."""
    return item_place(progress, step.kind, step.id)


def item_place(progress: Progress, kind: str, item_id: str) -> Path:
    """:func:`work_place` of a break or an exercise named by kind and id (lesson-less ones
    included)."""
    folder = progress.learner_dir / "work"
    if kind == "break":
        return folder / "breaks" / item_id
    return folder / "exercises" / f"{item_id}.py"


def summary(progress: Progress, lang: str) -> list[dict[str, Any]]:
    """The path lesson by lesson: ``[{"lesson" (slug), "number" (place on the path), "title",
    "steps": [{"kind", "id", ...state}]}]``."""
    out: list[dict[str, Any]] = []
    questions = all_questions()
    for step in steps():
        if step.kind == "lesson":
            out.append({"lesson": step.id, "number": step.lesson.number,
                        "title": step.lesson.titles.get(
                lang, step.lesson.titles["en"]), "steps": []})
        out[-1]["steps"].append({"kind": step.kind, "id": step.id,
                                 **state(step, progress, questions)})
    return out
