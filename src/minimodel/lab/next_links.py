"""Where a lesson leads: the "Next:" link is generated from ``path.yaml``, never written.

A page (:func:`minimodel.lab.pages.practice_section`) and a notebook
(:func:`minimodel.site.notebooks.lesson_notebook`) end with :func:`next_markdown`, the link to
the lesson that follows in the path; ``lab next`` walks the same list. So inserting a lesson
(one line in ``path.yaml``) changes the previous lesson's "Next:" without touching its file.

A lesson that writes the path's order into its prose ("Next: [attention](attention.md)", "the
previous lesson") goes stale the day a lesson is inserted beside it; :func:`order_problems`
(``lab validate --section links``) names each such phrase and the fix: link the lesson by its
name instead, or leave the "Next:" to the page.
"""

from __future__ import annotations

import re
from pathlib import Path

from minimodel.lab.lessons import LANGS, LESSONS_DIR, Lesson, load_lessons
from minimodel.messages import say

# Phrases that state a lesson's place relative to another (English and Spanish), outside code.
_ORDER = re.compile(
    r"\b(?:Next(?: come\b[^:\n]*)?\s*[:,][^.\[]{0,120}\[[^\]]+\]\([a-z][\w-]*\.md\)"
    r"|(?:next|previous) lesson"
    r"|Siguiente\s*:|(?:A continuación|Después\s*:)[^.\[]{0,120}\[[^\]]+\]\([a-z][\w-]*\.md\)"
    r"|lección (?:siguiente|anterior)|(?:siguiente|anterior) lección)",
    re.IGNORECASE)
_CODE = re.compile(r"^(```+|~~~+)[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)


def following(lesson: Lesson, lessons_dir: Path = LESSONS_DIR) -> Lesson | None:
    """The lesson after ``lesson`` in ``path.yaml`` (None for the last one)."""
    lessons = load_lessons(lessons_dir)
    return lessons[lesson.number] if lesson.number < len(lessons) else None


def next_markdown(lesson: Lesson, lang: str, lessons_dir: Path = LESSONS_DIR) -> str:
    """``Next: [title](slug.md)`` in ``lang`` for the lesson after ``lesson``; "" at the end."""
    after = following(lesson, lessons_dir)
    if after is None:
        return ""
    return say("site.next", lang, title=after.titles.get(lang, after.titles["en"]),
               slug=after.slug)


def _prose(text: str) -> str:
    """``text`` with every fenced block's lines blanked (line numbers kept)."""
    return _CODE.sub(lambda found: "\n" * found.group(0).count("\n"), text)


def order_problems(lessons_dir: Path = LESSONS_DIR) -> list[str]:
    """Each hand-written statement of the path's order in a lesson file, with its fix."""
    problems = []
    for lesson in load_lessons(lessons_dir):
        for lang in LANGS:
            path = lesson.path(lang, lessons_dir)
            if not path.is_file():
                continue
            text = _prose(path.read_text(encoding="utf-8"))
            for found in _ORDER.finditer(text):
                line = text.count("\n", 0, found.start()) + 1
                phrase = " ".join(found.group(0).split())
                problems.append(
                    f"lessons/{path.name}:{line}: '{phrase}' writes the path's order by hand "
                    "and goes stale when a lesson is inserted; the page and the notebook end "
                    "with a 'Next:' link generated from path.yaml, so delete the 'Next:' "
                    "sentence, or name the lesson you mean ('[the sparse gradient]"
                    "(sparse-gradient.md)') instead of its place")
    return problems
