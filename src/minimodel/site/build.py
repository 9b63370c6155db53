"""``minimodel docs build``: stage ``docs/`` (:mod:`minimodel.site.stage`) and build it with
MkDocs Material + mkdocs-static-i18n (English default, Spanish) + mkdocstrings, then fix up
what a site opened from ``file://`` needs: one search index per language and no alternate-link
head tags.

Links to code use mkdocstrings' cross-references by symbol,
``[text][minimodel.nn.embedding.Lookup]``, so they follow the code when lines move; a strict
build fails on any that does not resolve.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from minimodel.lab.breaks import list_breaks
from minimodel.lab.exercises import list_exercises
from minimodel.lab.lessons import LESSONS_DIR, Lesson, load_lessons
from minimodel.lab.quiz import CONTENT_DIR
from minimodel.lab.pages import QUIZ_ID
from minimodel.site.stage import REPO_ROOT, source_docs_dir, stage
from minimodel.site.words import REFERENCE

SECOND_LANGS = ("es",)   # each gets its own folder: site/es/


def quiz_files() -> list[str]:
    """The ids of the quiz files (``lab/content/quizzes/*.yaml``), each with its own page."""
    return sorted(path.stem for path in CONTENT_DIR.glob("*.yaml"))


def quiz_order(lessons: list[Lesson]) -> list[str]:
    """The quiz files for the menu: the phase quiz first, then the files named after a lesson
    in the path's order, then any other file by name."""
    place = {lesson.slug: lesson.number for lesson in lessons}
    return sorted(quiz_files(), key=lambda q: (q != QUIZ_ID, place.get(q, len(place) + 1), q))


def nav(lessons: list[Lesson]) -> list[Any]:
    """The menu. Paths without titles: each language's page title (its first heading)."""
    return [
        {"Home": "index.md"},
        {"Lessons": [f"lessons/{lesson.stem}.md" for lesson in lessons]},
        # the phase quiz first, then each quiz file of a lesson (lessons' order); a lesson's
        # questions kept in the phase quiz have no page of their own
        {"Lab": ["lab/index.md", "tutor.md",
                 {"Quiz": [f"quizzes/{q}.md" for q in quiz_order(lessons)]},
                 {"Breaks": [f"lab/breaks/{b['id']}.md" for b in list_breaks()]},
                 {"Exercises": [f"lab/exercises/{e['id']}.md" for e in list_exercises()]}]},
        {"Results": ["measured.md", "results.md"]},
        {"Engine": ["architecture.md", "interop.md", "judge.md", "doctor.md", "explorer.md",
                    "authoring.md"]},
        {"Reference": [f"reference/{stem}.md" for stem in REFERENCE]},
    ]


def _mkdocs():
    """MkDocs' build function, config loader and abort error (the docs extra)."""
    try:  # an optional dependency: imported here so the library never needs it
        from mkdocs.commands.build import build as mkdocs_build
        from mkdocs.config import load_config
        from mkdocs.exceptions import Abort
    except ImportError:
        raise ValueError("building the site needs the docs extra: pip install -e \".[docs]\""
                         ) from None
    return mkdocs_build, load_config, Abort


def build(site_dir: str | os.PathLike, strict: bool = True,
          docs_dir: str | os.PathLike | None = None,
          lessons_dir: str | os.PathLike = LESSONS_DIR, drift_fails: bool = False,
          on_drift: Callable[[str], None] | None = None,
          on_progress: Callable[[str], None] | None = None) -> Path:
    """Stage the docs and build the site into ``site_dir``; returns its path.
    ``on_progress`` receives a line per lesson file run and per build stage.

    Every lesson's code runs first (a block that raises or prints something else than its
    ``output`` block fails the build, naming file:line and the difference). Numbers that
    drift beyond the tolerance a block declares are a warning (``on_drift``, default stderr),
    and fail the build with ``drift_fails`` (``docs build --strict``). ``strict``: any MkDocs
    warning (a broken page link, a code cross-reference that does not resolve) fails the
    build.
    """
    mkdocs_build, load_config, abort = _mkdocs()
    docs_dir = Path(docs_dir) if docs_dir is not None else source_docs_dir()
    site = Path(site_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="minimodel-docs-") as tmp:
        staged = stage(Path(tmp) / "docs", docs_dir, Path(lessons_dir), drift_fails, on_drift,
                       on_progress)
        if on_progress is not None:
            on_progress("building the pages with MkDocs ...")
        config = load_config(str(REPO_ROOT / "mkdocs.yml"), docs_dir=str(staged),
                             site_dir=str(site), strict=strict,
                             nav=nav(load_lessons(Path(lessons_dir))))
        warnings = _WarningList()
        logging.getLogger("mkdocs").addHandler(warnings)
        try:
            mkdocs_build(config)
        except abort as exc:  # strict mode: name the warnings in the error
            raise ValueError(f"the site did not build ({exc}): "
                             + "; ".join(warnings.messages[:10])) from None
        finally:
            logging.getLogger("mkdocs").removeHandler(warnings)
    _drop_alternate_links(site)
    split_search_index(site)
    relative_404(site / "404.html")
    return site


def relative_404(page: Path) -> None:
    """MkDocs writes the 404 page with links from the server's root (``/assets/...``), which
    lead nowhere when the site is opened from ``file://``. The page sits at the site's root, so
    the same links without the leading slash work offline, and ``docs serve`` answers a
    missing page by redirecting to ``/404.html``, where they resolve the same way."""
    if page.is_file():
        text = page.read_text(encoding="utf-8")
        page.write_text(re.sub(r'(\s(?:href|src)=")/(?!/)', r"\1", text), encoding="utf-8")


def split_search_index(site: Path) -> None:
    """One search index per language, so search in a language finds that language's pages.

    MkDocs' search plugin writes one ``search/search_index.json`` for both languages, and the
    offline plugin's ``search_index.js`` (what a page opened from ``file://`` reads) ends up
    with the last language built only. Here each language gets both files with its own pages:
    ``search/`` for English and ``es/search/`` for Spanish, whose pages are pointed at it by
    their ``base`` (Material looks for the index at ``<base>/search/``).
    """
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    for lang in ("en", *SECOND_LANGS):
        prefix = "" if lang == "en" else f"{lang}/"
        docs = [dict(doc, location=doc["location"][len(prefix):]) for doc in index["docs"]
                if (doc["location"].startswith(prefix) if prefix else
                    not doc["location"].startswith(tuple(f"{x}/" for x in SECOND_LANGS)))]
        own = {"config": dict(index["config"], lang=[lang]), "docs": docs}
        folder = site / prefix / "search"
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(own, ensure_ascii=False)
        (folder / "search_index.json").write_text(text, encoding="utf-8")
        (folder / "search_index.js").write_text(f"var __index = {text}", encoding="utf-8")
    for lang in SECOND_LANGS:
        for page in (site / lang).rglob("*.html"):
            depth = len(page.relative_to(site / lang).parts) - 1
            base = "/".join([".."] * depth) or "."
            text = page.read_text(encoding="utf-8")
            fixed = re.sub(r'("base": )"[^"]*"', lambda m: f'{m.group(1)}"{base}"', text, count=1)
            if fixed != text:
                page.write_text(fixed, encoding="utf-8")


_ALTERNATE = re.compile(r'<link rel="alternate" href="[^"]*" hreflang="[^"]*">\s*')


def _drop_alternate_links(site: Path) -> None:
    """Remove the ``<link rel="alternate" hreflang>`` head tags from every page.

    They are hints for search engines; Material's script also reads them to fetch a
    ``sitemap.xml`` beside each alternate page, which from ``file://`` is a failed request
    (a console error) on every page. The visible language switch is made of ordinary links
    (``<a hreflang>`` in the header) and keeps working.
    """
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        cleaned = _ALTERNATE.sub("", text)
        if cleaned != text:
            page.write_text(cleaned, encoding="utf-8")


class _WarningList(logging.Handler):
    """Collects MkDocs warnings, so a failed strict build can say what failed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))
