"""The lab as a whole: the learner's progress along the path, and the one content validator.

:func:`status` reads the path (:mod:`minimodel.lab.path`) lesson by lesson; :func:`validate`
runs every check of the lab's content, section by section: the quiz files, the exercises
(every reference, alternative and known-wrong solution judged), the breaks (every bug patch
applied and checked), the links between lessons and items, the translations' freshness and
the glossary (Spanish of every lab text and lesson).
"""

from __future__ import annotations

from typing import Any, Callable

from minimodel.lab import path as learning_path
from minimodel.lab.i18n import DEFAULT_LANG
from minimodel.lab.progress import Progress


def _other_quizzes(progress: Progress) -> list[dict[str, Any]]:
    """Quiz files that are no lesson's quiz (``phase-13-embeddings``): best right / total."""
    from minimodel.lab.quiz.loader import lesson_quizzes, list_quizzes

    lessons = {lesson.stem for lesson in lesson_quizzes()}
    out = []
    for quiz_id in list_quizzes():
        if quiz_id not in lessons:
            record = progress.get("quiz", quiz_id) or {}
            out.append({"id": quiz_id, "attempts": int(record.get("attempts", 0)),
                        "right": record.get("best_score"), "total": record.get("total")})
    return out


def status(learner_dir: str | None = None, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """``{"learner_dir", "path": [{"lesson", "title", "steps": [...]}], "totals", "next",
    "other_quizzes"}``.

    ``totals[kind]`` is ``{"done", "total"}`` per step kind; for quizzes also ``right`` and
    ``questions`` (best take of each lesson's quiz, summed) so a quiz taken with 25/27 right
    reads as taken, with its score, not as "not done"; for breaks and exercises also
    ``revealed``, how many of the done ones were done after viewing the answer.
    """
    progress = Progress(learner_dir)
    lessons = learning_path.summary(progress, lang)
    totals: dict[str, dict[str, int]] = {kind: {"done": 0, "total": 0}
                                         for kind in learning_path.STEP_KINDS}
    totals["quiz"].update(right=0, questions=0)
    totals["break"]["revealed"] = totals["exercise"]["revealed"] = 0
    for lesson in lessons:
        for step in lesson["steps"]:
            totals[step["kind"]]["total"] += 1
            totals[step["kind"]]["done"] += step["done"]
            if step.get("revealed"):
                totals[step["kind"]]["revealed"] += 1
            if step["kind"] == "quiz":
                totals["quiz"]["right"] += step["right"] or 0
                totals["quiz"]["questions"] += step["total"] or 0
    nxt = learning_path.pending(progress)
    return {"learner_dir": str(progress.learner_dir), "path": lessons, "totals": totals,
            "next": {"kind": nxt.kind, "id": nxt.id} if nxt else None,
            "other_quizzes": _other_quizzes(progress)}


# What each section's validation does, shown while it runs (the breaks take ~10-40 s).
VALIDATE_STEPS = {
    "quiz": "schema, answers and labelled answers of every quiz file",
    "links": "the path file against the lesson files, every lesson's links to its questions, "
             "breaks and exercises, both ways, no TODO left, no hand-written 'Next:', "
             "and no $maths$ in a heading",
    "translations": "both languages present and made from the current English",
    "exercises": "judging every reference, alternative and known-wrong solution",
    "breaks": "applying every bug patch to the current library, running experiments and checks, "
              "searching each break's surface before rung 2 for its cause words",
    "glossary": "Spanish of quizzes, breaks, exercises, messages, lessons and site pages: the "
                "glossary's one word per concept, decimal comma, '15 %', « » quotes",
    "lessons": "running the code of the lessons changed since they last passed (all with "
               "--all-lessons) and comparing what it prints with the page, strictly",
}


def _quiz() -> list[str]:
    from minimodel.lab.quiz import validate_all

    return validate_all()


def _links() -> list[str]:
    from minimodel.lab.authoring import todo_problems
    from minimodel.lab.headings import math_heading_problems
    from minimodel.lab.items import link_problems
    from minimodel.lab.lessons import path_problems
    from minimodel.lab.next_links import order_problems

    return (path_problems() + link_problems() + todo_problems() + order_problems()
            + math_heading_problems())


def _translations() -> list[str]:
    from minimodel.lab.freshness import translation_problems
    from minimodel.lab.items import load_items

    return translation_problems(load_items())


def _exercises() -> list[str]:
    from minimodel.lab.exercises import validate_all

    return case_label_problems() + [str(p) for p in validate_all()]


def case_label_problems() -> list[str]:
    """Every hidden case kind an exercise uses has a Spanish label: the catalogue's
    (``case_label.*`` in messages.yaml, shared generators) or the exercise's own
    (``cases.labels.es``, declared inputs)."""
    from minimodel.lab.exercises.cases import generator_kinds
    from minimodel.lab.exercises.declared import LABELS, NEUTRAL_KINDS
    from minimodel.lab.exercises.registry import all_exercises
    from minimodel.messages import catalogue

    exercises = all_exercises()       # parsing them registers their declared labels
    known = set(catalogue()) | {f"case_label.{kind}" for kind, labels in LABELS.items()
                                if "es" in labels}
    return [f"exercise {ex.id}: the case kind {kind!r} has no Spanish label; add it to "
            f"case_label in src/minimodel/messages.yaml ({kind}: {{en: ..., es: ...}})"
            for ex in exercises for kind in generator_kinds(ex.cases["generator"])
            if kind not in NEUTRAL_KINDS and f"case_label.{kind}" not in known]


# Findings that do not fail validation, by section (filled while a section runs).
WARNINGS: dict[str, list[str]] = {}


def _breaks() -> list[str]:
    from minimodel.lab.breaks import validate_all

    WARNINGS["breaks"] = []
    return [str(p) for p in validate_all(warnings=WARNINGS["breaks"])]


def _lessons(every: bool = False,
             on_file: Callable[[Any, int, int], None] | None = None) -> list[str]:
    from minimodel.lab.lesson_runs import lesson_run_problems

    return lesson_run_problems(every=every, on_file=on_file)


def _glossary() -> list[str]:
    from minimodel.lab.terminology import glossary_problems, printed_count_problems

    return glossary_problems() + printed_count_problems()


SECTIONS: dict[str, Callable[[], list[str]]] = {
    "quiz": _quiz, "links": _links, "translations": _translations, "exercises": _exercises,
    "breaks": _breaks, "glossary": _glossary, "lessons": _lessons}


def validate(on_section: Callable[[str], None] | None = None,
             only: list[str] | None = None, all_lessons: bool = False,
             on_lesson: Callable[[Any, int, int], None] | None = None) -> dict[str, list[str]]:
    """Problems per section (all of :data:`SECTIONS`, or ``only`` those); a section that
    crashes is reported as a problem of that section, the others still run.

    ``on_section(name)`` is called as each section starts (progress for a slow validation);
    the lessons section runs the changed lessons (every one with ``all_lessons``), calling
    ``on_lesson(path, i, n)`` before each file.
    """
    sections: dict[str, list[str]] = {}
    for name, check in SECTIONS.items():
        if only and name not in only:
            continue
        if on_section:
            on_section(name)
        try:
            sections[name] = check(all_lessons, on_lesson) if name == "lessons" else check()
        except Exception as exc:  # noqa: BLE001 - one broken section must not hide the others
            sections[name] = [f"the {name} check failed: {type(exc).__name__}: {exc}"]
    return sections
