"""The documentation site: lessons in both languages, lab pages generated from their sources,
code links by symbol that must resolve, and nothing fetched from the network."""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
from pathlib import Path

import pytest

from minimodel import docsite
from minimodel.cli import main
from minimodel.lab.breaks import list_breaks, load_break
from minimodel.lab.exercises import get_exercise, list_exercises

DOCS = docsite.source_docs_dir()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    assert main(["docs", "build", "--out", str(out)]) == 0   # strict: any warning fails
    return out


def test_every_lesson_has_a_spanish_version_and_real_practice_items():
    lessons = docsite.load_lessons()
    assert len(lessons) >= 12   # one page per concept of the curriculum
    for lesson in lessons:
        assert (docsite.LESSONS_DIR / f"{lesson.stem}.es.md").is_file(), lesson.stem
        assert lesson.titles["es"] != lesson.titles["en"]
        assert lesson.quiz, lesson.stem           # every lesson ends with practice
    assert docsite.practice_problems(lessons) == []


def test_pages_exist_in_both_languages(site):
    for rel in ("index.html", "lessons/01-embedding-lookup.html", "lab/index.html",
                "quizzes/phase-13-embeddings.html", "reference/nn-embedding.html"):
        assert (site / rel).is_file() and (site / "es" / rel).is_file(), rel
    for b in list_breaks():
        assert (site / "lab" / "breaks" / f"{b['id']}.html").is_file()
    for e in list_exercises():
        assert (site / "es" / "lab" / "exercises" / f"{e['id']}.html").is_file()
    spanish = (site / "es" / "lessons" / "07-tied-gradient.html").read_text(encoding="utf-8")
    assert "El gradiente atado: dos caminos" in spanish and 'lang="es"' in spanish


def test_nothing_is_loaded_from_the_network(site):
    external = re.compile(r'<(?:script|link|img|iframe)[^>]+(?:src|href)="(?:https?:)?//')
    offenders = [p for p in site.rglob("*.html") if external.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
    css = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.css"))
    assert "fonts.googleapis" not in css and "@import url(http" not in css


def test_code_links_point_at_the_symbols(site):
    html = (site / "lessons" / "01-embedding-lookup.html").read_text(encoding="utf-8")
    assert 'href="../reference/nn-embedding.html#minimodel.nn.embedding.Lookup"' in html
    reference = (site / "reference" / "nn-embedding.html").read_text(encoding="utf-8")
    assert 'id="minimodel.nn.embedding.Lookup"' in reference
    text = html_module.unescape(re.sub(r"<[^>]+>", "", reference))
    assert "np.add.at(dW, flat, g.reshape(-1))" in text   # the source is shown


def test_a_broken_code_link_fails_the_build(tmp_path):
    lessons = tmp_path / "lessons"
    shutil.copytree(docsite.LESSONS_DIR, lessons)
    lesson = lessons / "01-embedding-lookup.md"
    lesson.write_text(lesson.read_text(encoding="utf-8")
                      + "\nSee [gone][minimodel.nn.embedding.NoSuchThing].\n", encoding="utf-8")
    with pytest.raises(ValueError, match="NoSuchThing"):
        docsite.build(tmp_path / "site", lessons_dir=lessons)


def test_generated_break_pages_follow_the_source_and_hide_the_fix(site):
    for b in list_breaks():
        brk = load_break(b["id"])
        for lang, prefix in (("en", site), ("es", site / "es")):
            page = docsite.break_page(b["id"], lang, None)
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
            page = docsite.exercise_page(e["id"], lang, None)
            assert ex.text("statement", lang).strip() in page
            assert ex.signature() in page


def test_spanish_pages_use_the_glossary():
    from minimodel.lab.terminology import glossary_problems

    texts = []
    pages = sorted(DOCS.rglob("*.es.md")) + sorted(docsite.LESSONS_DIR.glob("*.es.md"))
    for page in pages:
        prose = re.sub(r"```.*?```", " ", page.read_text(encoding="utf-8"), flags=re.S)
        prose = "\n".join(line for line in prose.splitlines() if not line.startswith("    "))
        texts.append((page.name, prose))
    assert len(texts) >= 7
    assert glossary_problems(iter(texts)) == []


def test_lessons_and_lab_pages_link_both_ways(site):
    lesson = (site / "lessons" / "02-sparse-gradient.html").read_text(encoding="utf-8")
    assert 'href="../lab/breaks/embedding-drops-repeats.html"' in lesson
    assert "q-13-04" in lesson
    back = (site / "lab" / "breaks" / "embedding-drops-repeats.html").read_text(encoding="utf-8")
    assert 'href="../../lessons/02-sparse-gradient.html"' in back
    quiz = (site / "es" / "quizzes" / "phase-13-embeddings.html").read_text(encoding="utf-8")
    assert quiz.count('href="../lessons/') >= 20      # every listed question links back


def test_the_measured_page_is_rendered_from_its_data(site):
    data = json.loads((DOCS / "measured.json").read_text(encoding="utf-8"))
    tied = data["compare"]["tied"]["summary"]
    untied = data["compare"]["untied"]["summary"]
    for lang, prefix in (("en", site), ("es", site / "es")):
        page = docsite.measured_page(data, lang)
        assert f"| {tied['parameters']:,} | {untied['parameters']:,} |" in page
        assert f"{tied['val_loss']:.4f}" in page and data["machine"]["cpu"] in page
        html = (prefix / "measured.html").read_text(encoding="utf-8")
        assert f"{tied['val_loss']:.4f}" in html and "measured-curves.svg" in html
    curve = data["compare"]["tied"]["curve"]
    assert len(curve) >= 5 and all("erank_embedding" in row for row in curve)
