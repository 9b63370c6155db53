"""Lesson pages whose code has run: every ``python`` block of every lesson, in both languages,
is executed by :func:`minimodel.lab.lessons.run_lesson` when the site is built; the build fails
when a block raises or prints something other than the ``output`` block written after it, and
the figures a block draws are inserted as images right after it (and its output).

Each language's file runs on its own, so the Spanish page shows the figures its own code drew,
with Spanish labels: ``lessons/figures/<stem>/<lang>/block-K-N.svg``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minimodel.lab.lessons import LANGS, Lesson, LessonRun, run_lesson, with_output_notes
from minimodel.lab.pages import practice_section
from minimodel.site.words import page_name
from minimodel.messages import say


class LessonCodeError(ValueError):
    """A lesson's code raised, or printed something its ``output`` block does not say (or, in a
    strict build, numbers beyond the tolerance its ``output`` block declares)."""


def with_figures(text: str, result: LessonRun, figure_folder: str, lang: str) -> str:
    """``text`` with, after each block that drew figures, one image per figure."""
    for block, run in reversed(list(zip(result.blocks, result.runs))):
        if run.figures:
            images = "".join(f"\n\n![{say('site.figure', lang)}]({figure_folder}/{name})"
                             for name in run.figures)
            text = text[:block.end] + images + text[block.end:]
    return text


def stage_lessons(lessons: list[Lesson], lessons_dir: Path, target: Path,
                  on_lesson: Callable[[str], None] | None = None
                  ) -> tuple[list[str], list[str]]:
    """Run every lesson file and write its page (figures, practice links, the one-line note
    under each block not compared exactly) under ``target``.

    Returns ``(problems, drifts)`` of every file (both empty when all ran as written); the
    pages are written either way. Two files run at a time: each is its own Python process.
    ``on_lesson`` receives a progress line as each file finishes ("lesson 3/44 ...").
    """
    jobs = [(lesson, lang) for lesson in lessons for lang in LANGS
            if lesson.path(lang, lessons_dir).is_file()]

    def run(job: tuple[Lesson, str]) -> LessonRun:
        lesson, lang = job
        figures = target / "figures" / lesson.stem / lang
        started = time.monotonic()
        result = run_lesson(lesson.path(lang, lessons_dir), figures)
        if on_lesson is not None:
            with finished_lock:
                finished.append(job)
                state = "ok" if not result.problems else "problems"
                on_lesson(f"lesson {len(finished)}/{len(jobs)}: {lesson.stem} ({lang}) "
                          f"{state}, {time.monotonic() - started:.1f} s")
        return result

    finished: list[tuple[Lesson, str]] = []
    finished_lock = threading.Lock()
    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        results = list(pool.map(run, jobs))
    problems, drifts = [], []
    target.mkdir(parents=True, exist_ok=True)   # (running a lesson's code made it, if it had any)
    for (lesson, lang), result in zip(jobs, results):
        problems += result.problems
        drifts += result.drifts
        text = lesson.path(lang, lessons_dir).read_text(encoding="utf-8")
        text = with_figures(text, result, f"figures/{lesson.stem}/{lang}", lang)
        text = with_output_notes(text, lang)
        page = target / page_name(lesson.stem, lang)
        page.write_text(text.rstrip("\n") + "\n" + practice_section(lesson, lang, lessons_dir),
                        encoding="utf-8")
    return problems, drifts
