"""The documentation site: lessons in both languages, lab pages generated from their sources,
code links by symbol that must resolve, and nothing fetched from the network."""

from __future__ import annotations

import html as html_module
import json
import re
import shutil

import pytest

from minimodel.cli import main
from minimodel.lab.breaks import list_breaks, load_break
from minimodel.lab.exercises import get_exercise, list_exercises
from minimodel.lab.lessons import LESSONS_DIR, load_lessons, path_file
from minimodel.site.build import build
from minimodel.lab.pages import break_page, exercise_page, practice_problems, quiz_page
from minimodel.site.results_page import measured_page
from minimodel.site.stage import source_docs_dir
from minimodel.site.words import number

DOCS = source_docs_dir()


def test_every_lesson_has_a_spanish_version_and_real_practice_items():
    lessons = load_lessons()
    assert len(lessons) >= 12   # one page per concept of the curriculum
    for lesson in lessons:
        assert (LESSONS_DIR / f"{lesson.stem}.es.md").is_file(), lesson.stem
        assert lesson.titles["es"] != lesson.titles["en"]
    assert practice_problems(lessons) == []


def test_pages_exist_in_both_languages(site):
    for rel in ("index.html", "lessons/embedding-lookup.html", "lab/index.html",
                "quizzes/phase-13-embeddings.html", "reference/nn-embedding.html"):
        assert (site / rel).is_file() and (site / "es" / rel).is_file(), rel
    for b in list_breaks():
        assert (site / "lab" / "breaks" / f"{b['id']}.html").is_file()
    for e in list_exercises():
        assert (site / "es" / "lab" / "exercises" / f"{e['id']}.html").is_file()
    spanish = (site / "es" / "lessons" / "tied-gradient.html").read_text(encoding="utf-8")
    assert "El gradiente atado: dos caminos" in spanish and 'lang="es"' in spanish


def test_nothing_is_loaded_from_the_network(site):
    external = re.compile(r'<(?:script|link|img|iframe)[^>]+(?:src|href)="(?:https?:)?//')
    offenders = [p for p in site.rglob("*.html") if external.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
    css = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.css"))
    assert "fonts.googleapis" not in css and "@import url(http" not in css


def test_code_links_point_at_the_symbols(site):
    html = (site / "lessons" / "embedding-lookup.html").read_text(encoding="utf-8")
    assert 'href="../reference/nn-embedding.html#minimodel.nn.embedding.Lookup"' in html
    reference = (site / "reference" / "nn-embedding.html").read_text(encoding="utf-8")
    assert 'id="minimodel.nn.embedding.Lookup"' in reference
    text = html_module.unescape(re.sub(r"<[^>]+>", "", reference))
    assert "np.add.at(dW, flat, g.reshape(-1))" in text   # the source is shown


def test_a_broken_code_link_fails_the_build(tmp_path):
    lessons = tmp_path / "lessons"
    shutil.copytree(LESSONS_DIR, lessons)
    shutil.copy(path_file(), path_file(lessons))
    for page in lessons.glob("*.md"):   # the pages without their code: nothing to run (the
        # site fixture runs every lesson once), so this build costs seconds, not minutes
        page.write_text(re.sub(r"```(?:python|output)[^\n]*\n.*?```\n", "",
                               page.read_text(encoding="utf-8"), flags=re.S), encoding="utf-8")
    lesson = lessons / "embedding-lookup.md"
    lesson.write_text(lesson.read_text(encoding="utf-8")
                      + "\nSee [gone][minimodel.nn.embedding.NoSuchThing].\n", encoding="utf-8")
    with pytest.raises(ValueError, match="NoSuchThing"):
        build(tmp_path / "site", lessons_dir=lessons)


def test_generated_break_pages_follow_the_source_and_hide_the_fix(site):
    for b in list_breaks():
        brk = load_break(b["id"])
        for lang, prefix in (("en", site), ("es", site / "es")):
            page = break_page(b["id"], lang, None)
            assert brk.text("intro", lang).strip()[:60] in page
            for hint in brk.texts("hints", lang):
                assert hint.strip()[:50] in page
            explanation = brk.text("explanation", lang).strip()
            assert explanation[:80] not in page       # the fix stays in `break diff`
            assert "@@" not in page and brk.patch_text[:40] not in page
            html = (prefix / "lab" / "breaks" / f"{b['id']}.html").read_text(encoding="utf-8")
            assert brk.text("title", lang).split(":")[0] in html
            assert html.count("<details") == len(brk.texts("hints", lang))  # one fold per rung


def test_generated_exercise_pages_follow_the_source(site):
    for e in list_exercises():
        ex = get_exercise(e["id"])
        for lang in ("en", "es"):
            page = exercise_page(e["id"], lang, None)
            assert ex.text("statement", lang).strip() in page
            assert ex.signature() in page


def test_spanish_pages_use_the_glossary():
    from minimodel.lab.terminology import glossary_problems

    texts = []
    pages = sorted(DOCS.rglob("*.es.md")) + sorted(LESSONS_DIR.glob("*.es.md"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"````.*?````", " ", text)   # inline spans that show a fence: code
        prose = re.sub(r"```.*?```", " ", text, flags=re.S)
        prose = "\n".join(line for line in prose.splitlines() if not line.startswith("    "))
        texts.append((page.name, prose))
    assert len(texts) >= 7
    assert glossary_problems(iter(texts)) == []


def test_lessons_and_lab_pages_link_both_ways(site):
    lesson = (site / "lessons" / "embedding-lookup.html").read_text(encoding="utf-8")
    assert 'href="../lab/breaks/frequent-tokens-learn-slowly.html"' in lesson
    assert "q-13-01" in lesson
    back = (site / "lab" / "breaks" / "frequent-tokens-learn-slowly.html").read_text(encoding="utf-8")
    assert 'href="../../lessons/embedding-lookup.html"' in back
    quiz = (site / "es" / "quizzes" / "phase-13-embeddings.html").read_text(encoding="utf-8")
    assert quiz.count('href="../lessons/') >= 20      # every listed question links back


def test_the_measured_page_is_rendered_from_its_data(site):
    data = json.loads((DOCS / "measured.json").read_text(encoding="utf-8"))
    tied = data["compare"]["tied"]["summary"]
    untied = data["compare"]["untied"]["summary"]
    for lang, prefix in (("en", site), ("es", site / "es")):
        page = measured_page(data, lang)
        params = [number(s["parameters"], ",", lang) for s in (tied, untied)]
        assert f"| {params[0]} | {params[1]} |" in page
        loss = number(tied["val_loss"], ".4f", lang)
        assert loss in page and data["machine"]["cpu"] in page
        html = (prefix / "measured.html").read_text(encoding="utf-8")
        assert loss in html and "measured-curves.svg" in html
    curve = data["compare"]["tied"]["curve"]
    assert len(curve) >= 5 and all("erank_embedding" in row for row in curve)


def _text(html: str) -> str:
    """The visible text of a page (tags dropped, entities decoded)."""
    html = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    return html_module.unescape(re.sub(r"<[^>]+>", " ", html))


def test_spanish_numbers_are_written_the_spanish_way():
    assert number(544256, ",", "es") == "544\u00a0256"
    assert number(4.21771, ".4f", "es") == "4,2177"
    assert number(2048, ",", "es") == "2048"          # four digits: no separator
    assert number(1234567.5, ",.1f", "es") == "1\u00a0234\u00a0567,5"
    assert number(544256, ",", "en") == "544,256"


def test_break_pages_show_their_texts_not_the_language_keys(site):
    for b in list_breaks():
        brk = load_break(b["id"])
        for lang, prefix in (("en", site), ("es", site / "es")):
            text = _text((prefix / "lab" / "breaks" / f"{b['id']}.html")
                         .read_text(encoding="utf-8"))
            assert not re.search(r"\b1\.?\s+en\s+2\.?\s+es\b", text), (b["id"], lang)
            observe = brk.data.get("observe")
            if isinstance(observe, dict):   # Markdown marks are gone from the page's text
                expected = " ".join(re.sub(r"[`*_]", "", observe[lang]).split())[:60]
                assert expected in " ".join(re.sub(r"[`*_]", "", text).split()), b["id"]


def test_quiz_answers_are_folded_and_the_source_is_named_once(site):
    for lang, prefix in (("en", site), ("es", site / "es")):
        mirror = (DOCS / "quizzes" / f"phase-13-embeddings.{lang}.md").read_text(encoding="utf-8")
        page = quiz_page(mirror, load_lessons(), lang)
        assert "✓" not in page
        questions = page.count("\n## q-")
        assert page.count('??? success') == questions >= 20
        html = (prefix / "quizzes" / "phase-13-embeddings.html").read_text(encoding="utf-8")
        text = _text(html)
        assert "✓" not in text
        assert text.count("phase-13-embeddings.yaml") == 1
        # every answer sits in a closed <details>: the visible text before opening holds none
        assert html.count('<details class="success"') == questions
        assert "<details class=\"success\" open" not in html


def test_exercise_pages_give_a_command_that_works(site):
    for e in list_exercises():
        english = exercise_page(e["id"], "en", None)
        spanish = exercise_page(e["id"], "es", None)
        assert f"minimodel exercise check {e['id']} --file " in english
        assert "--lang es" not in english
        assert re.search(rf"minimodel exercise check {e['id']} --file \S+\.py --lang es", spanish)
        assert "| argumento | valor |" in spanish


def test_search_finds_each_language_in_its_own_index(site):
    english = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    spanish = json.loads((site / "es" / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert english["config"]["lang"] == ["en"] and spanish["config"]["lang"] == ["es"]
    assert not any(d["location"].startswith("es/") for d in english["docs"])
    assert any("Aprende" in d["text"] for d in spanish["docs"])
    assert not any("Aprende" in d["text"] for d in english["docs"])
    for folder in (site, site / "es"):
        js = (folder / "search" / "search_index.js").read_text(encoding="utf-8")
        assert js.startswith("var __index = ")
        assert json.loads(js[len("var __index = "):]) == json.loads(
            (folder / "search" / "search_index.json").read_text(encoding="utf-8"))
    page = (site / "es" / "lessons" / "embedding-lookup.html").read_text(encoding="utf-8")
    assert '"base": ".."' in page           # Spanish pages read es/search/


def test_search_previews_never_show_a_hint_or_an_answer(site):
    # Regression: search previews showed the collapsed hint ladders (the last one is the fix)
    # and the quiz explanations. They stay on the pages, folded, and out of the index.
    from minimodel.lab.quiz import load_quiz

    def squeeze(text: str) -> str:
        return " ".join(re.sub(r"<[^>]+>|[`*]", " ", html_module.unescape(text)).split())

    for folder, lang in ((site, "en"), (site / "es", "es")):
        index = squeeze(" ".join(d["text"] for d in json.loads(
            (folder / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]))
        secrets = [h for b in list_breaks() for h in load_break(b["id"]).texts("hints", lang)]
        secrets += [q.explanation[lang] for q in load_quiz("phase-13-embeddings").questions]
        for secret in secrets:   # whole texts: a lesson may teach a sentence an answer repeats
            words = squeeze(secret)
            assert words and words not in index, (lang, words[:80])
        page = squeeze((folder / "lab" / "breaks" / f"{list_breaks()[0]['id']}.html")
                       .read_text(encoding="utf-8"))
        assert squeeze(load_break(list_breaks()[0]["id"]).texts("hints", lang)[-1])[:60] in page


def test_the_spanish_reference_menu_and_figures_are_spanish(site):
    html = (site / "es" / "reference" / "nn-lm-head.html").read_text(encoding="utf-8")
    for label in ("Cabezas de salida", "Pérdidas", "Activaciones", "Atención", "Diagnósticos"):
        assert label in html
    for label in ("Output heads", ">Losses<", ">Diagnostics<"):
        assert label not in html
    figure = (site / "es" / "lessons" / "figures" / "tied-gradient.svg")
    assert figure.is_file() or (site / "lessons" / "figures" / "tied-gradient.es.svg").is_file()


def test_lesson_code_output_and_figures_are_on_the_page(site):
    for lang, prefix, label in (("en", site, "sum of each row of E"),
                                ("es", site / "es", "suma de cada fila de E")):
        page = prefix / "lessons" / "runnable-demo.html"
        html = page.read_text(encoding="utf-8")
        assert "language-output" in html and "[[4. 5.]" in html
        images = re.findall(r'<img[^>]+src="([^"]*figures/runnable-demo/[^"]+\.svg)"', html)
        assert len(images) == 1 and images[0].endswith(f"/{lang}/block-2-0.svg")
        svg = (page.parent / images[0]).resolve().read_text(encoding="utf-8")
        assert label.split()[0] in svg      # the figure its own language's code drew


def test_maths_is_left_for_the_bundled_katex(site):
    html = (site / "lessons" / "runnable-demo.html").read_text(encoding="utf-8")
    assert '<span class="arithmatex">' in html and '<div class="arithmatex">' in html
    assert "assets/katex/katex.min.js" in html and "assets/katex/katex.min.css" in html
    assert (site / "assets" / "katex" / "LICENSE").is_file()
    css = (site / "assets" / "katex" / "katex.min.css").read_text(encoding="utf-8")
    fonts = re.findall(r"url\((fonts/[^)]+\.woff2)\)", css)
    assert fonts and all((site / "assets" / "katex" / font).is_file() for font in fonts)


def test_serve_on_a_busy_port_says_so_before_building(tmp_path, capsys):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["docs", "serve", "--out", str(tmp_path / "site"), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"port {port}" in err and "--port" in err and "already in use" in err
    assert not (tmp_path / "site").exists()          # nothing was built


def _code_without_comments(markdown: str) -> list[str]:
    blocks = re.findall(r"```\w*\n(.*?)```", markdown, flags=re.S)
    return ["\n".join(re.sub(r"(^|\s+)#.*$", "", line).rstrip() for line in block.splitlines())
            for block in blocks]


def test_the_spanish_interop_page_keeps_the_english_pages_code():
    english = (DOCS / "interop.md").read_text(encoding="utf-8")
    spanish = (DOCS / "interop.es.md").read_text(encoding="utf-8")
    assert _code_without_comments(spanish) == _code_without_comments(english)
    assert english.count("\n## ") == spanish.count("\n## ")
    assert english.count("\n### ") == spanish.count("\n### ")


def test_the_home_page_lists_every_lesson_in_order(site):
    for prefix in (site, site / "es"):
        html = (prefix / "index.html").read_text(encoding="utf-8")
        article = html[html.index("<article"):html.index("</article>")]   # not the menu
        links = re.findall(r'href="lessons/([\w-]+)\.html"', article)
        path = [lesson.stem for lesson in load_lessons()]
        assert [link for link in dict.fromkeys(links) if link in path] == path
        assert "<!-- lessons:" not in html


def test_a_lesson_has_one_practice_section_holding_its_lab_links(site):
    for rel, heading in (("lessons/why-tie.html", "Practice"),
                         ("es/lessons/why-tie.html", "Práctica")):
        page = (site / rel).read_text(encoding="utf-8")
        headings = [html_module.unescape(re.sub(r"<[^>]+>", "", h)).strip(" ¶")
                    for h in re.findall(r"<h2[^>]*>(.*?)</h2>", page, re.S)]
        assert headings.count(heading) == 1 and headings[-1] == heading, headings
        assert "lab/breaks/embedding-moves-too-far.html" in page.split(f">{heading}")[-1]


def test_the_404_page_links_work_offline_and_the_server_redirects_to_it(site, tmp_path):
    import functools
    import http.server
    import threading
    import urllib.error
    import urllib.request

    from minimodel.site.serve import SiteHandler

    page = (site / "404.html").read_text(encoding="utf-8")
    assert not re.findall(r'\s(?:href|src)="/(?!/)', page)       # nothing from the root
    assert 'href="assets/' in page and 'src="assets/' in page
    handler = functools.partial(SiteHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        with urllib.request.urlopen(f"{base}/lessons/no-such-page.html", timeout=30) as answer:
            assert answer.url == f"{base}/404.html" and b"404" in answer.read()
        server.shutdown()


def test_english_phrases_are_found_in_visible_text_only():
    from minimodel.site.english_check import english_runs, visible_text

    page = ("<head><title>the page</title></head><p>Prohíbe las llamadas; Made with Material."
            "</p><pre>for the loss</pre><p><code>with the</code> <em>Attention Is All You "
            "Need</em> «Using the Output Embedding» in situ, la loss of the model</p>")
    assert english_runs(visible_text(page)) == ["Made with Material", "la loss of the model"]


def test_the_spanish_site_shows_no_english_outside_code(site):
    """Every visible string of site/es is Spanish: pages, lab pages, the measured page's metric
    names, the reference pages' own words ("Parámetros", "Código fuente en") and the meta
    description; the English docstrings of the reference pages are announced as such."""
    from minimodel.site.english_check import english_on_spanish_pages

    assert english_on_spanish_pages(site) == []
    home = (site / "es" / "index.html").read_text(encoding="utf-8")
    assert '<meta name="description" content="Aprende cómo' in home
    reference = (site / "es" / "reference" / "nn-lm-head.html").read_text(encoding="utf-8")
    assert "Código fuente en" in reference and "Source code in" not in reference
    assert "reproduce los docstrings del código" in reference
    english = (site / "reference" / "nn-lm-head.html").read_text(encoding="utf-8")
    assert "Source code in" in english and "reproduce los docstrings" not in english
    measured = _text((site / "es" / "measured.html").read_text(encoding="utf-8"))
    assert "best peer" not in measured and "mejor alternativa" in measured
