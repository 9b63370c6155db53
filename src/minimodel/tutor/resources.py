"""What a client may cite: every lesson as Markdown, in both languages, and the glossary."""

from __future__ import annotations

from typing import Any

from minimodel.lab.lessons import LANGS, Lesson, load_lessons, split_front_matter
from minimodel.lab.terminology import load_glossary

LESSON_URI = "minimodel://lessons/{lang}/{stem}"
GLOSSARY_URI = "minimodel://glossary"


def lesson_markdown(lesson: Lesson, lang: str) -> str:
    """The lesson's text without its front matter (the English when there is no twin)."""
    source = lesson.path(lang)
    source = source if source.is_file() else lesson.path("en")
    return split_front_matter(source.read_text(encoding="utf-8"))[1].strip() + "\n"


def glossary_markdown() -> str:
    """The English <-> Spanish glossary as a Markdown table (the lab's Spanish uses it)."""
    terms = load_glossary()
    rows = ["# Glossary / Glosario", "", "| English | Español | note |", "|---|---|---|"]
    for term in terms:
        cells = [str(term.get(key, "")).replace("|", "\\|") for key in ("en", "es", "note")]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def lesson_resources() -> list[dict[str, Any]]:
    """``[{"uri", "name", "title", "lesson", "lang"}]`` for every lesson and language."""
    return [{"uri": LESSON_URI.format(lang=lang, stem=lesson.stem),
             "name": f"lesson-{lesson.stem}-{lang}", "lesson": lesson, "lang": lang,
             "title": lesson.titles.get(lang, lesson.titles["en"])}
            for lesson in load_lessons() for lang in LANGS]
