"""`lab validate` (links) refuses maths in a heading: the site's table of contents shows it raw."""

from __future__ import annotations

from minimodel.lab.headings import math_heading_problems


def test_the_shipped_lessons_and_pages_have_no_maths_in_a_heading():
    assert math_heading_problems() == []


def test_a_heading_with_dollar_maths_is_refused_with_file_line_and_fix(tmp_path):
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "tokens.md").write_text(
        "# Tokens\n\nText with $V$ is fine.\n\n## Padding $V$ to a multiple of 64\n",
        encoding="utf-8")
    [problem] = math_heading_problems([folder])
    assert problem.startswith("lessons/tokens.md:5: the heading 'Padding $V$ to a multiple of 64'")
    assert "'V · d'" in problem


def test_code_comments_and_unicode_headings_pass(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "page.md").write_text(
        "## The float32 trap: √(2/π)\n\n```python\n# cost in $: none\nx = 1\n```\n",
        encoding="utf-8")
    assert math_heading_problems([folder, tmp_path / "absent"]) == []
