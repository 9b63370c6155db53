"""The documentation site in a real headless Chromium, as a reader uses it:
every page loads with no console error and no request leaving the machine, the language
switch flips every page, lesson code links land on their symbol. Key pages are screenshotted.
(The explorer's own browser tests: test_explorer_timeline.py.)"""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest

from minimodel import docsite
from minimodel.cli import main

LOCAL_SCHEMES = {"file", "data", "blob", "about", "chrome", "devtools"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return docsite.build(tmp_path_factory.mktemp("site"))


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if p.name != "404.html")


def _open(browser, path: Path) -> None:
    browser.get_log("browser")       # drop what earlier pages logged
    browser.get_log("performance")
    browser.get(path.as_uri())


def _problems(browser) -> tuple[list[str], list[str]]:
    """(console errors, requests that left the machine) since the page was opened."""
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    remote = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if urlparse(url).scheme not in LOCAL_SCHEMES:
                remote.append(url)
    return errors, remote


def test_every_page_loads_cleanly_and_offline(browser, site, artifacts):
    pages = _pages(site)
    english = [p for p in pages if not p.relative_to(site).parts[0] == "es"]
    spanish = [p for p in pages if p.relative_to(site).parts[0] == "es"]
    assert len(english) == len(spanish) >= 35
    failures = {}
    for page in pages:
        _open(browser, page)
        errors, remote = _problems(browser)
        if errors or remote:
            failures[str(page.relative_to(site))] = errors + remote
    assert failures == {}
    for rel, name in (("lessons/07-tied-gradient.html", "lesson-tied-gradient.en.png"),
                      ("es/lessons/07-tied-gradient.html", "lesson-tied-gradient.es.png"),
                      ("lab/breaks/tied-vocab-mismatch.html", "break-tied-vocab-mismatch.en.png"),
                      ("es/quizzes/phase-13-embeddings.html", "quiz.es.png")):
        _open(browser, site / rel)
        browser.save_screenshot(str(artifacts / name))
    (artifacts / "page-count.txt").write_text(f"en {len(english)}\nes {len(spanish)}\n")


def test_the_language_switch_flips_every_page(browser, site):
    wrong = []
    for page in _pages(site):
        rel = page.relative_to(site)
        spanish = rel.parts[0] == "es"
        target_lang = "en" if spanish else "es"
        _open(browser, page)
        links = browser.find_elements("css selector", f'a[hreflang="{target_lang}"]')
        if not links:
            wrong.append(f"{rel}: no link to {target_lang}")
            continue
        browser.get(links[0].get_attribute("href"))
        landed = Path(urlparse(browser.current_url).path)
        expected = site / (Path(*rel.parts[1:]) if spanish else Path("es") / rel)
        lang = browser.execute_script("return document.documentElement.lang")
        if landed != expected or lang != target_lang:
            wrong.append(f"{rel}: landed on {landed} (lang {lang})")
    assert wrong == []


def test_lesson_code_links_land_on_their_symbol(browser, site):
    checked = 0
    for lesson in sorted((site / "lessons").glob("*.html")) + sorted((site / "es" / "lessons").glob("*.html")):
        _open(browser, lesson)
        hrefs = {a.get_attribute("href") for a in
                 browser.find_elements("css selector", "a.autorefs")}
        assert hrefs, lesson
        for href in hrefs:
            browser.get(href)
            fragment = urlparse(href).fragment
            assert browser.find_elements("id", fragment), href
            checked += 1
    assert checked >= 6


