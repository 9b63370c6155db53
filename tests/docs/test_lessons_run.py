"""The lesson runner: each ``python`` block in one fresh process, what it prints equal to the
``output`` block after it; it names file:line and the difference when a block does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.lab.lessons import code_blocks, lesson_problems, run_lesson, without_output_blocks
from minimodel.site.lesson_pages import LessonCodeError, with_figures
from minimodel.site.stage import stage

# Every lesson runs as written: the site fixture (tests/docs/conftest.py) builds the site,
# which runs every lesson in both languages and fails on any problem, and CI runs
# `minimodel lab check-lessons --strict` under two more CPUs' kernels. Running them a third time
# here cost minutes and found nothing those do not.


def _lesson(tmp_path: Path, body: str, name: str = "demo.md") -> Path:
    path = tmp_path / name
    path.write_text('---\ntitle: "Demo"\nquiz: []\nbreaks: []\nexercises: []\n---\n\n# Demo\n\n'
                    + body, encoding="utf-8")
    return path


def test_a_changed_number_is_named_with_its_line_and_the_difference(tmp_path):
    path = _lesson(tmp_path, "```python\nx = 2\nprint(x * 3)\nprint('same')\n```\n\n"
                             "```output\n5\nsame\n```\n")
    problems = lesson_problems(path)
    assert len(problems) == 1
    assert f"{path}:11:" in problems[0] or "demo.md:11:" in problems[0]
    assert "-5" in problems[0] and "+6" in problems[0]


def test_an_error_and_a_missing_output_block_are_problems(tmp_path):
    quiet = _lesson(tmp_path, "```python\nprint('hello')\n```\n", "a.md")
    assert "no ```output block follows it" in lesson_problems(quiet)[0]
    raising = _lesson(tmp_path, "```python\nx = 1\n```\n\n```python\n{}['k']\n```\n", "b.md")
    problems = lesson_problems(raising)
    assert len(problems) == 1 and "KeyError" in problems[0] and ":15:" in problems[0]


def test_trailing_spaces_and_blank_lines_do_not_count(tmp_path):
    path = _lesson(tmp_path, "```python\nprint('a  ')\nprint()\n```\n\n```output\na\n\n```\n")
    assert lesson_problems(path) == []


def test_blocks_share_one_namespace_and_figures_are_saved(tmp_path):
    path = _lesson(tmp_path, "```python\nimport matplotlib.pyplot as plt\nv = [1, 2]\n```\n\n"
                             "```python\nplt.plot(v)\nplt.title('drawn')\nplt.show()\n"
                             "print(len(v))\n```\n\n```output\n2\n```\n\nAfter.\n")
    result = run_lesson(path, tmp_path / "figures")
    assert result.problems == []
    assert [run.figures for run in result.runs] == [[], ["block-2-0.svg"]]
    assert "drawn" in (tmp_path / "figures" / "block-2-0.svg").read_text(encoding="utf-8")
    page = with_figures(path.read_text(encoding="utf-8"), result, "figures/x/en", "en")
    assert page.index("```output") < page.index("](figures/x/en/block-2-0.svg)") \
        < page.index("After.")


def test_output_blocks_are_removed_for_the_notebook():
    text = "```python\nprint(1)\n```\n\n```output\n1\n```\n\nText.\n"
    assert without_output_blocks(text) == "```python\nprint(1)\n```\n\nText.\n"
    assert code_blocks(text)[0].expected == "1\n"


def test_a_lesson_that_does_not_run_stops_the_build(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    _lesson(lessons, "```python\nprint(6 * 7)\n```\n\n```output\n41\n```\n")
    (tmp_path / "path.yaml").write_text("- demo\n", encoding="utf-8")
    with pytest.raises(LessonCodeError, match=r"(?s)demo\.md:11: .*-41.*\+42"):
        stage(tmp_path / "docs", lessons_dir=lessons)



def test_the_build_says_each_lesson_as_it_finishes(tmp_path):
    """`docs build` ran every lesson for minutes with nothing printed: now a line per file."""
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    _lesson(lessons, "```python\nprint(6 * 7)\n```\n\n```output\n42\n```\n")
    _lesson(lessons, "```python\nprint(6 * 7)\n```\n\n```output\n42\n```\n", "demo.es.md")
    (tmp_path / "path.yaml").write_text("- demo\n", encoding="utf-8")
    lines: list[str] = []
    stage(tmp_path / "docs", lessons_dir=lessons, on_lesson=lines.append)
    counts = [line.split(":")[0] for line in lines]       # in the order the files finished
    files = {line.split(": ")[1].split(",")[0] for line in lines}
    assert counts == ["lesson 1/2", "lesson 2/2"]
    assert files == {"demo (en) ok", "demo (es) ok"}
    assert all(line.endswith(" s") for line in lines)
