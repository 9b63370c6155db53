"""The two languages of every lesson are twins (same lab links, same runnable blocks), and
the tied-gradient lesson's figure is drawn from its worked example. (That every block runs and
prints what the lesson says is tests/docs/test_lessons_run.py.)"""

import pytest

from minimodel.lab.lessons import (MIN_CODE_BLOCKS, code_blocks, find_lesson, lesson_problems,
                                   load_lessons, split_front_matter)

LESSONS = [lesson.slug for lesson in load_lessons()]


@pytest.mark.parametrize("slug", LESSONS)
def test_the_spanish_lesson_is_a_twin_of_the_english_one(slug):
    lesson = find_lesson(slug)
    en, es = (lesson.path(lang).read_text(encoding="utf-8") for lang in ("en", "es"))
    (meta_en, body_en), (meta_es, body_es) = split_front_matter(en), split_front_matter(es)
    for key in ("quiz", "breaks", "exercises", "needs"):
        assert meta_en.get(key) == meta_es.get(key), key
    blocks_en, blocks_es = code_blocks(body_en), code_blocks(body_es)
    # the worked example runs, in each language (lab validate's translations section checks it)
    assert len(blocks_en) == len(blocks_es) >= MIN_CODE_BLOCKS


def test_the_tied_gradient_figure_is_drawn_from_the_worked_example(tmp_path):
    # the tied-gradient lesson: the figure shows V = 3, d = 2, id 0 (the example), once per language
    for lang in ("en", "es"):
        assert lesson_problems(find_lesson("tied-gradient").path(lang), tmp_path / lang) == []
        assert len(list((tmp_path / lang).rglob("*.svg"))) == 1
    assert "V = 3, d = 2, id 0" in (next((tmp_path / "en").rglob("*.svg"))).read_text()
