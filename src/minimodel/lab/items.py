"""The lab's content model: every quiz question, break and exercise is an :class:`Item`.

An item has an id, a kind (``question``, ``break``, ``exercise``), a title in each language
and its lesson. The lesson is never written in the item's own file: it comes from the lessons'
front matter (``quiz:``, ``breaks:``, ``exercises:``), the ONE place where a lesson links to
its lab items. An item no lesson lists must be named in ``content/lessonless.yaml`` (with the
reason), so a forgotten link is an error, not a silent orphan.

    from minimodel.lab.items import load_items
    [item for item in load_items() if item.lesson is None]   # the lesson-less ones
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from minimodel.lab.breaks import load_all as load_breaks
from minimodel.lab.exercises.registry import all_exercises
from minimodel.lab.lessons import FRONT_MATTER, Lesson, linked_ids, load_lessons
from minimodel.lab.quiz.loader import every_question

KINDS = ("question", "break", "exercise")
LESSONLESS_PATH = Path(__file__).resolve().parent / "content" / "lessonless.yaml"


@dataclass(frozen=True)
class Item:
    """One lab item; ``lesson`` is the stem of the lesson that lists it (None if none does),
    ``path`` the YAML file that holds its texts."""

    id: str
    kind: str
    titles: dict[str, str]
    lesson: str | None = None
    path: Path | None = None


def load_lessonless(path: Path = LESSONLESS_PATH) -> dict[str, list[str]]:
    """``{kind: [ids]}`` of the items that explicitly belong to no lesson."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data = data or {}
    return {kind: [str(entry["id"]) for entry in data.get(FRONT_MATTER[kind]) or []]
            for kind in KINDS}


def _raw_items() -> list[Item]:
    """Every item with its titles, lesson not yet set."""
    items = [Item(q.id, "question", dict(q.title), path=q.path)
             for q in every_question()]
    items += [Item(b.id, "break", {lang: b.text("title", lang) for lang in ("en", "es")},
                   path=b.folder / "break.yaml") for b in load_breaks()]
    items += [Item(e.id, "exercise", dict(e.title), path=e.folder / "exercise.yaml")
              for e in all_exercises()]
    return items


def load_items(lessons: list[Lesson] | None = None) -> list[Item]:
    """Every item, its ``lesson`` taken from the first lesson whose front matter lists it."""
    lessons = load_lessons() if lessons is None else lessons
    owner: dict[tuple[str, str], str] = {}
    for lesson in lessons:
        for kind in KINDS:
            for item_id in linked_ids(lesson, kind):
                owner.setdefault((kind, item_id), lesson.stem)
    return [replace(i, lesson=owner.get((i.kind, i.id))) for i in _raw_items()]


def link_problems(lessons: list[Lesson] | None = None, items: list[Item] | None = None,
                  lessonless: dict[str, list[str]] | None = None) -> list[str]:
    """Every broken link between lessons and items, one sentence each.

    A lesson may only list items that exist; each item belongs to exactly one lesson, or is
    listed in ``lessonless.yaml`` (and then to none).
    """
    lessons = load_lessons() if lessons is None else lessons
    items = load_items(lessons) if items is None else items
    lessonless = load_lessonless() if lessonless is None else lessonless
    known = {(i.kind, i.id) for i in items}
    owners: dict[tuple[str, str], list[str]] = {}
    problems = [f"{kind} id {item_id!r} is used by more than one file; give each its own id"
                for kind, item_id in sorted(known) if sum(
                    (i.kind, i.id) == (kind, item_id) for i in items) > 1]
    for lesson in lessons:
        for kind in KINDS:
            for item_id in linked_ids(lesson, kind):
                owners.setdefault((kind, item_id), []).append(lesson.stem)
                if (kind, item_id) not in known:
                    problems.append(f"lesson {lesson.stem} lists {FRONT_MATTER[kind]}: "
                                    f"{item_id!r}, but no {kind} has that id; fix the front "
                                    f"matter or add the {kind}")
    for item in items:
        mine = owners.get((item.kind, item.id), [])
        listed = item.id in lessonless[item.kind]
        if len(mine) > 1:
            problems.append(f"{item.kind} {item.id} is listed by {len(mine)} lessons "
                            f"({', '.join(mine)}); keep it in one front matter only")
        if mine and listed:
            problems.append(f"{item.kind} {item.id} belongs to lesson {mine[0]} and is also "
                            f"listed in lessonless.yaml; remove it from lessonless.yaml")
        if not mine and not listed:
            problems.append(f"{item.kind} {item.id} belongs to no lesson; list it in a lesson's "
                            f"'{FRONT_MATTER[item.kind]}:' front matter or in lessonless.yaml")
    for kind, ids in lessonless.items():
        for item_id in ids:
            if (kind, item_id) not in known:
                problems.append(f"lessonless.yaml names {kind} {item_id!r}, which does not "
                                f"exist; remove it")
    return problems
