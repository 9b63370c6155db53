"""The staging folder: ``docs/`` copied, plus every page generated from its source.

1. ``docs/`` of the source checkout is copied to a temporary folder;
2. pages that must never be copied by hand are generated there from their sources: the lessons
   with their code run and their figures (:mod:`minimodel.site.lesson_pages`), one page per
   break and per exercise in each language, the lab index and the quiz page
   (:mod:`minimodel.lab.pages`), the results page and its figures and the API
   reference's pages;
3. MkDocs builds the staging folder (:mod:`minimodel.site.build`).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from minimodel.lab.breaks import list_breaks
from minimodel.lab.exercises import list_exercises
from minimodel.lab.lessons import LANGS, LESSONS_DIR, Lesson, load_lessons
from minimodel.site.figures import LESSON_FIGURES, figure_measured, figure_steps
from minimodel.lab.pages import (break_page, exercise_page, lab_index, lesson_of,
                                      practice_problems, quiz_page)
from minimodel.site.lesson_pages import LessonCodeError, stage_lessons
from minimodel.site.results_page import measured_page
from minimodel.site.words import REFERENCE, page_name
from minimodel.messages import say

REPO_ROOT = Path(__file__).resolve().parents[3]

def source_docs_dir() -> Path:
    """``docs/`` of the source checkout; ValueError when minimodel is installed elsewhere."""
    if (REPO_ROOT / "mkdocs.yml").is_file() and (REPO_ROOT / "docs").is_dir():
        return REPO_ROOT / "docs"
    raise ValueError(f"no source checkout with mkdocs.yml and docs/ around {REPO_ROOT}; the "
                     "site is built from a clone of the minimodel repository")


LESSON_LIST = "<!-- lessons: the list is generated from the lessons when the site is built -->"


def with_lesson_list(home: str, lessons: list[Lesson], lang: str) -> str:
    """The home page with its lesson-list marker replaced by the lessons, in order."""
    items = "\n".join(f"  {k}. [{lesson.titles.get(lang, lesson.titles['en'])}]"
                      f"(lessons/{lesson.stem}.md)" for k, lesson in enumerate(lessons, 1))
    return home.replace(LESSON_LIST, "\n" + items + "\n")


def reference_page(module: str, title: str, note: str = "") -> str:
    """An API reference page: the module's docstrings (mkdocstrings), after a note when the
    page's language is not the code's."""
    return f"# {title}\n\n" + (f"*{note}*\n\n" if note else "") + f"::: {module}\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def drift_warning(drifts: list[str]) -> str:
    """What a build that is not strict says about lesson blocks that drifted on this machine."""
    return (f"warning: {len(drifts)} lesson block(s) print numbers beyond the tolerance their "
            "```output block declares, on this machine (the site is built all the same; "
            "--strict fails on this):\n" + "\n".join(drifts))


def stage(target: Path, docs_dir: Path | None = None,
          lessons_dir: Path = LESSONS_DIR, drift_fails: bool = False,
          on_drift: Callable[[str], None] | None = None,
          on_lesson: Callable[[str], None] | None = None) -> Path:
    """Copy ``docs/`` to ``target`` and write every generated page there. Returns ``target``.
    ``on_lesson`` receives a progress line as each lesson file has run.

    Raises :class:`LessonCodeError` naming every lesson block that raised or printed
    something else than its ``output`` block says (file:line and the difference). A block
    whose only difference is numeric drift beyond its declared tolerance
    (:mod:`minimodel.lab.output_check`) fails too when ``drift_fails``; otherwise
    ``on_drift`` (default: print to stderr) receives a warning that lists them.
    """
    docs_dir = docs_dir or source_docs_dir()
    lessons = load_lessons(lessons_dir)
    problems = practice_problems(lessons)
    if problems:
        raise ValueError("; ".join(problems))
    shutil.copytree(docs_dir, target, dirs_exist_ok=True)
    problems, drifts = stage_lessons(lessons, lessons_dir, target / "lessons", on_lesson)
    if problems or (drifts and drift_fails):
        raise LessonCodeError(
            (f"{len(problems)} lesson block(s) do not run as written:\n" + "\n".join(problems)
             if problems else "")
            + ("\n" if problems and drift_fails and drifts else "")
            + (f"{len(drifts)} lesson block(s) drifted beyond their declared tolerance (a "
               "strict build fails on drift; without --strict it is a warning):\n"
               + "\n".join(drifts) if drift_fails and drifts else ""))
    if drifts:
        (on_drift or (lambda text: print(text, file=sys.stderr)))(drift_warning(drifts))
    for name, draw in LESSON_FIGURES.items():
        for lang in LANGS:   # x.es.svg: static-i18n's localized asset for the Spanish pages
            _write(target / "lessons" / "figures" / page_name(name, lang, ".svg"), draw(lang))
    for lang in LANGS:
        home = target / page_name("index", lang)
        if home.is_file():
            _write(home, with_lesson_list(home.read_text(encoding="utf-8"), lessons, lang))
        for mirror in sorted((target / "quizzes").glob(f"*.{lang}.md")):
            quiz_id = mirror.name[:-len(f".{lang}.md")]
            _write(mirror, quiz_page(mirror.read_text(encoding="utf-8"), lessons, lang, quiz_id))
        _write(target / "lab" / page_name("index", lang), lab_index(lang))
        for b in list_breaks():
            _write(target / "lab" / "breaks" / page_name(b["id"], lang),
                   break_page(b["id"], lang, lesson_of(lessons, "breaks", b["id"])))
        for e in list_exercises():
            _write(target / "lab" / "exercises" / page_name(e["id"], lang),
                   exercise_page(e["id"], lang, lesson_of(lessons, "exercises", e["id"])))
        for stem, module in REFERENCE.items():
            _write(target / "reference" / page_name(stem, lang),
                   reference_page(module, say(f"site.reference.{stem}", lang),
                                  say("site.reference_note", lang)))
    measured = docs_dir / "measured.json"
    if measured.is_file():
        data = json.loads(measured.read_text(encoding="utf-8"))
        for lang in LANGS:
            _write(target / "figures" / page_name("measured-curves", lang, ".svg"),
                   figure_measured(data, lang))
            if data.get("steps"):
                _write(target / "figures" / page_name("measured-steps", lang, ".svg"),
                       figure_steps(data, lang))
            _write(target / page_name("measured", lang), measured_page(data, lang))
    return target
