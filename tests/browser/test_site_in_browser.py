"""The documentation site in a real headless Chromium, as a reader uses it:
every page loads with no console error and no request leaving the machine, the language
switch flips every page, lesson code links land on their symbol. Key pages are screenshotted.
(The explorer's own browser tests: test_explorer_timeline.py.)"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from minimodel.lab.breaks import list_breaks, load_break
from minimodel.lab.i18n import pick
from minimodel.lab.lessons import LESSONS_DIR
from minimodel.messages import catalogue

LOCAL_SCHEMES = {"file", "data", "blob", "about", "chrome", "devtools"}


# `site`: the site built once per test run (tests/conftest.py), demo lesson included.


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
    for rel, name in (("lessons/tied-gradient.html", "lesson-tied-gradient.en.png"),
                      ("es/lessons/tied-gradient.html", "lesson-tied-gradient.es.png"),
                      ("lab/breaks/loss-crash-after-merge.html", "break-loss-crash-after-merge.en.png"),
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


def _visible_text(browser, selector: str = "article") -> str:
    """The text a reader sees in ``selector``, without code (which stays as the code prints)."""
    return browser.execute_script(
        "const root = document.querySelector(arguments[0]).cloneNode(true);"
        "root.querySelectorAll('pre, code, .katex, .arithmatex, .headerlink')"
        ".forEach(e => e.remove());"
        "return root.innerText;", selector)


def test_break_pages_show_their_source_text_not_keys(browser, site, artifacts):
    for b in list_breaks():
        brk = load_break(b["id"])
        for lang, prefix in (("en", site), ("es", site / "es")):
            _open(browser, prefix / "lab" / "breaks" / f"{b['id']}.html")
            text = " ".join(browser.find_element("css selector", "article").text.split())
            assert not re.search(r"\b1\.\s*en\b.*\b2\.\s*es\b", text), (b["id"], lang)
            observe = brk.data.get("observe")
            if isinstance(observe, dict):
                words = re.sub(r"[`*_]", "", pick(observe, lang)).split()[:8]
                assert " ".join(words) in re.sub(r"[`*_]", "", text), (b["id"], lang)
            intro = re.sub(r"[`*_]", "", brk.text("intro", lang)).split()[:8]
            assert " ".join(intro) in re.sub(r"[`*_]", "", text), (b["id"], lang)
    _open(browser, site / "es" / "lab" / "breaks" / "loss-crash-after-merge.html")
    browser.save_screenshot(str(artifacts / "break-loss-crash-after-merge.es.png"))


def _search(browser, page: Path, query: str) -> list[str]:
    """Type ``query`` in the page's search box; the result links (absolute URLs)."""
    _open(browser, page)
    browser.execute_script("document.getElementById('__search').click()")  # open the search
    box = browser.find_element("css selector", "input.md-search__input")
    time.sleep(0.3)
    box.send_keys(query)
    links: list[str] = []
    for _ in range(100):                        # the index loads in a worker: wait for it
        links = [a.get_attribute("href") for a in
                 browser.find_elements("css selector", ".md-search-result__link")]
        if links:
            break
        time.sleep(0.1)
    return links


def test_search_finds_each_language_in_its_own_pages(browser, site, artifacts):
    english = _search(browser, site / "lessons" / "embedding-lookup.html", "gradient")
    browser.save_screenshot(str(artifacts / "search-gradient.en.png"))
    spanish = _search(browser, site / "es" / "lessons" / "embedding-lookup.html",
                      "gradiente")
    browser.save_screenshot(str(artifacts / "search-gradiente.es.png"))
    assert english and spanish
    assert not [u for u in english if "/es/" in u], english
    assert all("/es/" in u for u in spanish), spanish
    assert _search(browser, site / "es" / "index.html", "consulta")


# The site's own words (site.* of the catalogue, the API reference's titles among them).
# The site's English labels; one the Spanish keeps inside its own label ("softmax" in
# "softmax completa") and an empty one are no English leftover.
ENGLISH_UI = sorted({entry["en"] for key, entry in catalogue().items()
                     if key.startswith("site.") and entry["en"].strip()
                     and entry["en"].strip().lower() not in entry["es"].lower()
                     and (len(entry["en"].split()) <= 4 or key.startswith("site.reference."))
                     and "{" not in entry["en"] and entry["en"] not in ("no", "yes")}
                    | {"Previous", "Next", "Search", "Table of contents", "Hint ladder"})


def test_spanish_pages_show_no_english_ui_words(browser, site):
    found = {}
    for page in sorted((site / "es").rglob("*.html")):
        rel = page.relative_to(site)
        if rel.name == "404.html":
            continue
        _open(browser, page)
        # the menus and headers of every page; the whole text of the pages the site writes
        # (the API reference's docstrings are English)
        selector = ".md-container" if rel.parts[1] in ("lab", "quizzes", "lessons") \
            or rel.name in ("measured.html", "index.html") else ".md-sidebar--primary"
        text = _visible_text(browser, selector)
        hits = [word for word in ENGLISH_UI if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])",
                                                         text)]
        if hits:
            found[str(rel)] = hits
    assert found == {}


def test_maths_renders_with_the_bundled_katex(browser, site, artifacts):
    for lang, prefix in (("en", site), ("es", site / "es")):
        _open(browser, prefix / "lessons" / "runnable-demo.html")
        inline = browser.find_elements("css selector", "span.arithmatex .katex")
        display = browser.find_elements("css selector", "div.arithmatex .katex-display")
        assert len(inline) >= 2 and len(display) == 1, lang
        assert "logits" in display[0].text
        errors, remote = _problems(browser)
        assert errors == [] and remote == []
        browser.save_screenshot(str(artifacts / f"lesson-demo-maths-figure.{lang}.png"))


def test_a_lessons_code_drawn_figure_is_shown(browser, site):
    for lang, prefix in (("en", site), ("es", site / "es")):
        _open(browser, prefix / "lessons" / "runnable-demo.html")
        images = [img for img in browser.find_elements("css selector", "article img")
                  if "/figures/runnable-demo/" in img.get_attribute("src")]
        assert len(images) == 1 and f"/{lang}/block-2-0.svg" in images[0].get_attribute("src")
        width = browser.execute_script("return arguments[0].naturalWidth", images[0])
        assert width > 100, lang


def test_every_lesson_page_shows_its_maths_figures_outputs_and_practice(browser, site,
                                                                        artifacts):
    """Every lesson in both languages, as a newcomer reads them: the maths typeset (no
    raw $...$, no KaTeX error), every figure loaded and drawn by that language's own run,
    every code block of the source on the page with an output block after each one that
    prints, and the practice links (questions, breaks, exercises) leading to pages that
    exist, in the same language."""
    from minimodel.lab.lessons import code_blocks, load_lessons

    problems = []
    for lesson in load_lessons():
        for lang, prefix in (("en", site), ("es", site / "es")):
            page = prefix / "lessons" / f"{lesson.stem}.html"
            _open(browser, page)
            found = browser.execute_script("""
                const art = document.querySelector('article');
                const imgs = [...art.querySelectorAll('img')];
                return {raw: (art.innerText.match(/\\$[^$\\n]{1,60}\\$/g) || []),
                        katex: art.querySelectorAll('.katex').length,
                        errors: art.querySelectorAll('.katex-error').length,
                        figures: imgs.map(i => [i.src, i.naturalWidth]),
                        pre: art.querySelectorAll('pre').length,
                        links: [...art.querySelectorAll('a[href]')].map(a => a.href)
                                 .filter(h => /\\/(quizzes|lab)\\//.test(h))};""")
            text = lesson.path(lang, LESSONS_DIR).read_text(encoding="utf-8")
            blocks = code_blocks(text)
            where = f"{lang}/{lesson.stem}"
            if found["raw"] or found["errors"] or ("$" in text and not found["katex"]):
                problems.append(f"{where}: maths not typeset {found['raw'][:2]}")
            for src, width in found["figures"]:
                if f"/figures/{lesson.stem}/{lang}/" not in src or width == 0:
                    problems.append(f"{where}: figure {src} missing or another language's")
            printed = sum(block.expected is not None for block in blocks)
            if found["pre"] < len(blocks) + printed:
                problems.append(f"{where}: {found['pre']} code/output blocks on the page, "
                                f"the source has {len(blocks)} + {printed} outputs")
            kinds = {"quiz": "/quizzes/", "breaks": "/lab/breaks/", "exercises": "/lab/exercises/"}
            for kind, part in kinds.items():
                if getattr(lesson, kind) and not any(part in h for h in found["links"]):
                    problems.append(f"{where}: no link to its {kind}")
            for href in found["links"]:
                target = Path(urlparse(href).path)
                in_es = "/es/" in urlparse(href).path
                if not target.is_file() or in_es != (lang == "es"):
                    problems.append(f"{where}: practice link {href} is broken or leaves {lang}")
        if lesson.slug in ("softmax-cross-entropy", "causal-mask", "capstone-tied-gpt"):
            browser.save_screenshot(str(artifacts / f"lesson-{lesson.stem}.es.png"))
    assert problems == []


def test_code_blocks_fit_at_1280_px(browser, site, artifacts):
    browser.set_window_size(1280, 900)
    try:
        overflowing = []
        pages = sorted((site / "lessons").glob("*.html")) + \
            sorted((site / "es" / "lessons").glob("*.html")) + \
            sorted((site / "lab" / "exercises").glob("*.html"))
        for page in pages:
            _open(browser, page)
            wide = browser.execute_script(
                "return [...document.querySelectorAll('article pre > code')]"
                ".filter(c => c.scrollWidth > c.clientWidth + 1).length")
            if wide:
                overflowing.append(f"{page.relative_to(site)}: {wide}")
        _open(browser, site / "lessons" / "embedding-lookup.html")
        browser.save_screenshot(str(artifacts / "lesson-01-at-1280.en.png"))
    finally:
        browser.set_window_size(1400, 1000)
    assert overflowing == []


# Every box of an exercise page (code, tables, the statement's formulas) that is cut off:
# wider than its own box where that hides the rest (overflow hidden/clip), or reaching past
# the window (a sideways scroll hides it).
CUT_OFF = """
  const out = [], width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width) out.push('page wider than the window');
  document.querySelectorAll('article pre, article code, article table').forEach(box => {
    const style = getComputedStyle(box), r = box.getBoundingClientRect();
    if (['hidden', 'clip'].includes(style.overflowX) && box.scrollWidth > box.clientWidth + 1 ||
        ['hidden', 'clip'].includes(style.overflowY) && box.scrollHeight > box.clientHeight + 1 ||
        r.width && r.right > width + 1)
      out.push(`${box.tagName.toLowerCase()} "${box.textContent.trim().slice(0, 40)}"`);
  });
  return out;"""


@pytest.mark.parametrize("width", [1280, 390])
def test_no_box_of_an_exercise_page_is_cut_off(browser, site, artifacts, width):
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    try:
        cut = []
        for page in sorted((site / "lab" / "exercises").glob("*.html")) + \
                sorted((site / "es" / "lab" / "exercises").glob("*.html")):
            _open(browser, page)
            cut += [f"{page.relative_to(site)}: {box}" for box in browser.execute_script(CUT_OFF)]
        _open(browser, site / "lab" / "exercises" / "cbow-step.html")
        browser.save_screenshot(str(artifacts / f"exercise-cbow-step-at-{width}.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert cut == []


def test_quiz_answers_stay_hidden_until_asked(browser, site, artifacts):
    _open(browser, site / "es" / "quizzes" / "phase-13-embeddings.html")
    folds = browser.find_elements("css selector", "article details.success")
    assert len(folds) >= 20 and not any(f.get_attribute("open") for f in folds)
    assert "✓" not in browser.find_element("css selector", "article").text
    browser.save_screenshot(str(artifacts / "quiz-folded.es.png"))
    folds[0].find_element("css selector", "summary").click()
    assert folds[0].get_attribute("open") is not None
    assert "Respuesta" in folds[0].text


# Every character of a code block that lies under the block's copy button (Material's
# .md-code__nav, top-right corner): the end of a long first line used to run under it.
UNDER_THE_BUTTON = """
  const out = [];
  document.querySelectorAll('article pre').forEach(pre => {
    const nav = pre.querySelector('.md-code__nav'), code = pre.querySelector('code');
    if (!nav || !code) return;
    const b = nav.getBoundingClientRect(), walker = document.createTreeWalker(code, 4);
    let hidden = '';
    while (walker.nextNode()) {
      const node = walker.currentNode;
      for (let k = 0; k < node.length; k++) {
        if (!node.data[k].trim()) continue;
        const range = document.createRange(); range.setStart(node, k); range.setEnd(node, k + 1);
        for (const r of range.getClientRects())
          if (r.right > b.left && r.left < b.right && r.bottom > b.top && r.top < b.bottom)
            hidden += node.data[k];
      }
    }
    if (hidden) out.push(`"${code.textContent.slice(0, 40)}": ${hidden}`);
  });
  return out;"""


@pytest.mark.parametrize("width", [1280, 390])
def test_no_character_of_a_code_block_is_under_its_copy_button(browser, site, artifacts, width):
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    try:
        hidden = []
        for folder in ("lessons", "es/lessons", "lab/exercises", "es/lab/exercises"):
            for page in sorted((site / folder).glob("*.html")):
                _open(browser, page)
                hidden += [f"{page.relative_to(site)}: {block}"
                           for block in browser.execute_script(UNDER_THE_BUTTON)]
        _open(browser, site / "lessons" / "model-families.html")
        browser.save_screenshot(str(artifacts / f"lesson-model-families-at-{width}.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert hidden == []


# The navigation's title and the first link left in view of the scrolled list: does the title
# (or the shadow Material gives it) cover that link?
NAV_COVER = """
  const wrap = document.querySelector('.md-sidebar--primary .md-sidebar__scrollwrap');
  const title = wrap.querySelector('.md-nav--primary > .md-nav__title');
  const box = wrap.getBoundingClientRect(), t = title.getBoundingClientRect();
  const shown = [...wrap.querySelectorAll('.md-nav__link')].filter(l => l.offsetParent)
    .map(l => [l, l.getBoundingClientRect()])
    .filter(([l, r]) => r.bottom > box.top + 1 && r.top < box.bottom && l !== title);
  const [link, r] = shown[0];
  const covered = t.bottom > box.top && t.top < r.bottom && t.bottom > r.top;
  return [wrap.scrollTop, link.textContent.trim(), covered];"""


def test_the_navigation_title_never_covers_the_first_item_in_view(browser, site, artifacts):
    covered = []
    # the last lesson: the list opens scrolled down to it; then scrolled by hand
    for page in (site / "lessons" / "graduation.html", site / "es" / "lessons" / "graduation.html"):
        _open(browser, page)
        for scroll in (None, 150, 400):
            if scroll is not None:
                browser.execute_script("document.querySelector('.md-sidebar--primary "
                                       f".md-sidebar__scrollwrap').scrollTop = {scroll}")
            top, link, hidden = browser.execute_script(NAV_COVER)
            if hidden:
                covered.append(f"{page.relative_to(site)} scrolled {top}px: {link}")
    _open(browser, site / "lessons" / "graduation.html")
    browser.save_screenshot(str(artifacts / "nav-opened-at-the-last-lesson.png"))
    assert top > 0 and covered == []
