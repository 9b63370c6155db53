"""English left on the Spanish half of a built site: what a Spanish reader sees that is not in
Spanish.

A page's visible text is read without its code (``pre``, ``code``, ``kbd``, maths and figures),
without the titles of works and the words quoted as words (``<em>``, ``«…»``: *Attention Is All
You Need* keeps its name) and without the page's ``<head>``. In what remains, a run of two or
more words written in the Latin alphabet without accents that holds an English function word
("the", "with", "of"...) is English prose: ``Made with Material`` or ``the loss of``. Spanish
shares none of these words.

The API reference pages reproduce the code's docstrings, which are English like the code (each
page says so); there only mkdocstrings' own words are checked ("Parameters:", "Source code
in"...), which the build puts in Spanish.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

ENGLISH = frozenset(
    "the and of with is are for this that from to by be it its was which when what have can "
    "you your our we they if then only also each every should would into than while where "
    "does not".split())
REFERENCE_LABELS = ("Source code in", "Parameters:", "Returns:", "Raises:", "Bases:",
                    "Attributes:", "Examples:", "Methods:", "Functions:", "Classes:")
_HIDDEN = re.compile(r"<(head|script|style|pre|code|kbd|svg|em|math)\b[^>]*>.*?</\1>", re.S)
_ARITHMATEX = re.compile(r'<span class="arithmatex">.*?</span>|\\\(.*?\\\)|\\\[.*?\\\]', re.S)
_QUOTED = re.compile(r"«[^»]*»")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def visible_text(page: str) -> str:
    """The text a reader sees on ``page`` (HTML), code, maths, titles and quotes left out."""
    text = _ARITHMATEX.sub(" ", _HIDDEN.sub(" ", page))
    return _QUOTED.sub(" ", html.unescape(re.sub(r"<[^>]+>", " ", text)))


def english_runs(text: str) -> list[str]:
    """The runs (two words or more, spaces between) of unaccented words of ``text`` that hold
    an English function word."""
    runs: list[list[str]] = []
    end = None
    for word in _WORD.finditer(text):
        ascii_word = word.group(0).isascii()
        if ascii_word and runs and end is not None and text[end:word.start()].strip(" \t") == "" \
                and word.start() > end:
            runs[-1].append(word.group(0))
        elif ascii_word:
            runs.append([word.group(0)])
        end = word.end() if ascii_word else None
    return [" ".join(run) for run in runs
            if len(run) > 1 and any(word.lower() in ENGLISH for word in run)]


def english_on_spanish_pages(site: Path, lang: str = "es") -> list[str]:
    """``page: phrase`` for each English phrase on the ``lang`` half of a built ``site``."""
    found = []
    for path in sorted((site / lang).rglob("*.html")):
        name = path.relative_to(site / lang).as_posix()
        text = visible_text(path.read_text(encoding="utf-8"))
        if name.startswith("reference/"):   # the source listings are code: left out above
            found += [f"{name}: {label}" for label in REFERENCE_LABELS if label in text]
            continue
        found += [f"{name}: {phrase}" for phrase in english_runs(text)]
    return found
