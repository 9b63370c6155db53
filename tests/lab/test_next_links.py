"""A lesson's "Next:" is generated from path.yaml (page and notebook), so inserting a lesson
never leaves the previous one pointing past it; a hand-written one is a validate problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.lab.lessons import find_lesson, load_lessons
from minimodel.lab.next_links import next_markdown, order_problems
from minimodel.lab.pages import practice_section

PAGE = """---
title: "{title}"
quiz: []
breaks: []
exercises: []
---

# {title}

{prose}

```python
# Next: [not prose](not-a-lesson.md) -- code is never read as the path's order
print(1)
```

```output
1
```
"""


def _write(folder: Path, slug: str, title: str, prose: str = "Text.", title_es: str = "") -> None:
    (folder / f"{slug}.md").write_text(PAGE.format(title=title, prose=prose), "utf-8")
    (folder / f"{slug}.es.md").write_text(PAGE.format(title=title_es or title, prose=prose),
                                          "utf-8")


@pytest.fixture
def path3(tmp_path) -> Path:
    folder = tmp_path / "content" / "lessons"
    folder.mkdir(parents=True)
    _write(folder, "alpha", "Alpha")
    _write(folder, "gamma", "Gamma", title_es="Gamma en español")
    (folder.parent / "path.yaml").write_text("- alpha\n- gamma\n", encoding="utf-8")
    return folder


def test_inserting_a_lesson_changes_the_previous_lessons_next_link(path3):
    alpha = find_lesson("alpha", path3)
    assert next_markdown(alpha, "en", path3) == "Next: [Gamma](gamma.md)"
    assert next_markdown(alpha, "es", path3) == "Siguiente: [Gamma en español](gamma.md)"
    assert next_markdown(find_lesson("gamma", path3), "en", path3) == ""   # the last lesson

    _write(path3, "beta", "Beta")
    (path3.parent / "path.yaml").write_text("- alpha\n- beta\n- gamma\n", encoding="utf-8")
    alpha = find_lesson("alpha", path3)
    assert next_markdown(alpha, "en", path3) == "Next: [Beta](beta.md)"
    assert next_markdown(find_lesson("beta", path3), "en", path3) == "Next: [Gamma](gamma.md)"
    # The page ends with it, after the practice links.
    section = practice_section(alpha, "en", path3)
    assert section.rstrip().splitlines()[-1] == "Next: [Beta](beta.md)"
    assert "Next:" not in practice_section(find_lesson("gamma", path3), "en", path3)


def test_the_notebook_ends_with_the_generated_next_link_to_its_notebook(path3):
    pytest.importorskip("jupytext")
    from minimodel.site.notebooks import lesson_notebook

    notebook = lesson_notebook(find_lesson("alpha", path3), "es", path3)
    assert notebook.cells[-1].source == "Siguiente: [Gamma en español](gamma.es.ipynb)"
    last = lesson_notebook(find_lesson("gamma", path3), "en", path3)
    assert last.cells[-1].cell_type == "code"                  # the last lesson: no link


@pytest.mark.parametrize("prose", [
    "Next: [Gamma](gamma.md).",
    "Next, the head that\nproduces these logits: [the LM head](gamma.md).",
    "Try it before the next lesson.",
    "The lookup of the [previous lesson](alpha.md) reads rows.",
    "Siguiente: [Gamma](gamma.md).",
    "A continuación, [la atención](gamma.md), que lo resuelve.",
    "Después: [el proyecto final](gamma.md).",
    "Inténtala antes de la lección siguiente.",
])
def test_a_hand_written_order_is_named_with_its_line_and_fix(path3, prose):
    _write(path3, "alpha", "Alpha", prose="Intro line.\n\n" + prose)
    problems = order_problems(path3)
    assert len(problems) == 2                                   # the English and Spanish twins
    assert problems[0].startswith("lessons/alpha.md:12: '")
    assert "generated from path.yaml" in problems[0] and "(sparse-gradient.md)" in problems[0]


def test_naming_a_lesson_or_writing_next_in_code_is_not_a_problem(path3):
    _write(path3, "alpha", "Alpha", prose="The lesson [Gamma](gamma.md) resolves it. The next "
                                         "token is the target; a continuación, la tabla.")
    assert order_problems(path3) == []


def test_the_shipped_lessons_write_no_order_by_hand():
    assert load_lessons() and order_problems() == []
