"""Every block of the twelve existing lessons runs and prints what the lesson says, in both
languages, and the two languages are twins (same lab links, same runnable blocks)."""

import pytest

from minimodel.lab.lessons import code_blocks, find_lesson, lesson_problems, split_front_matter

LESSONS = ["01", "02", "05", "06", "07", "08", "09", "15", "16", "17", "18", "20"]


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("number", LESSONS)
def test_every_block_runs_and_prints_what_the_lesson_says(number, lang, tmp_path):
    path = find_lesson(number).path(lang)
    assert lesson_problems(path, tmp_path) == []


@pytest.mark.parametrize("number", LESSONS)
def test_the_spanish_lesson_is_a_twin_of_the_english_one(number):
    lesson = find_lesson(number)
    en, es = (lesson.path(lang).read_text(encoding="utf-8") for lang in ("en", "es"))
    (meta_en, body_en), (meta_es, body_es) = split_front_matter(en), split_front_matter(es)
    for key in ("quiz", "breaks", "exercises"):
        assert meta_en.get(key) == meta_es.get(key), key
    blocks_en, blocks_es = code_blocks(body_en), code_blocks(body_es)
    assert len(blocks_en) == len(blocks_es) >= 2       # the worked example runs, in each language
    assert all(b.expected is not None or "plt.show()" in b.code for b in blocks_en)


def test_the_tied_gradient_figure_is_drawn_from_the_worked_example(tmp_path):
    # lesson 07: the figure shows V = 3, d = 2, id 0 (the example), once per language
    for lang in ("en", "es"):
        assert lesson_problems(find_lesson("07").path(lang), tmp_path / lang) == []
        assert len(list((tmp_path / lang).rglob("*.svg"))) == 1
    assert "V = 3, d = 2, id 0" in (next((tmp_path / "en").rglob("*.svg"))).read_text()
