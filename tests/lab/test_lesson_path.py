"""The path's order lives in ONE file, ``content/path.yaml``: a lesson's number is its place
there, its id is its slug, and inserting a lesson is two files plus one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.lab.lessons import (LESSONS_DIR, find_lesson, load_lessons, path_file,
                                   path_problems, read_path)
from minimodel.lab.progress import Progress

LESSON = '---\ntitle: "{title}"\nquiz: []\nbreaks: []\nexercises: []\n---\n\n# {title}\n'


def _lessons(tmp_path: Path, slugs: list[str], listed: list[str] | None = None) -> Path:
    """A lessons folder with one English + Spanish pair per slug and a path file."""
    folder = tmp_path / "lessons"
    folder.mkdir()
    for slug in slugs:
        for name in (f"{slug}.md", f"{slug}.es.md"):
            (folder / name).write_text(LESSON.format(title=slug.title()), encoding="utf-8")
    path_file(folder).write_text("".join(f"- {s}\n" for s in listed or slugs), encoding="utf-8")
    return folder


def test_the_shipped_order_is_the_path_file_and_numbers_are_places():
    lessons = load_lessons()
    assert [lesson.slug for lesson in lessons] == read_path()
    assert [lesson.number for lesson in lessons] == list(range(1, len(lessons) + 1))
    assert path_problems() == []
    for lesson in lessons:
        assert lesson.path("en") == LESSONS_DIR / f"{lesson.slug}.md"
        assert find_lesson(str(lesson.number)).slug == lesson.slug
        assert find_lesson(f"{lesson.number:02d}").slug == lesson.slug
        assert find_lesson(lesson.slug).slug == lesson.slug


def test_inserting_a_lesson_is_one_line_and_renumbers_the_rest(tmp_path):
    folder = _lessons(tmp_path, ["lookup", "gradient", "targets"])
    assert find_lesson("2", folder).slug == "gradient"
    (folder / "softmax.md").write_text(LESSON.format(title="Softmax"), encoding="utf-8")
    (folder / "softmax.es.md").write_text(LESSON.format(title="Softmax"), encoding="utf-8")
    assert path_problems(folder) == [
        "lessons/softmax.md is not in path.yaml; add the line '- softmax' where the lesson "
        "belongs in the path, or delete the file"]
    path_file(folder).write_text("- lookup\n- softmax\n- gradient\n- targets\n", "utf-8")
    assert path_problems(folder) == []
    assert [(l.number, l.slug) for l in load_lessons(folder)] == [
        (1, "lookup"), (2, "softmax"), (3, "gradient"), (4, "targets")]
    assert find_lesson("2", folder).slug == "softmax"
    assert find_lesson("02-gradient", folder).slug == "gradient"     # an old numbered name


def test_the_path_file_problems_name_the_change(tmp_path):
    folder = _lessons(tmp_path, ["lookup", "gradient"],
                      listed=["lookup", "gradient", "lookup", "ghost"])
    (folder / "orphan.es.md").write_text(LESSON.format(title="x"), encoding="utf-8")
    assert path_problems(folder) == [
        "path.yaml lists 'lookup' 2 times; keep one line '- lookup'",
        "path.yaml lists 'ghost' but lessons/ghost.md does not exist; write it "
        "(`minimodel lab new lesson ghost`) or remove the line",
        "lessons/orphan.es.md has no English lesson lessons/orphan.md; write it, or rename "
        "the Spanish file to match its English twin"]
    path_file(folder).write_text("- lookup\n- 03-gradient\n", "utf-8")
    [problem] = path_problems(folder)
    assert "'03-gradient' is not a lesson slug" in problem and "a letter first" in problem


def test_an_unknown_lesson_lists_the_numbers_and_slugs(tmp_path):
    folder = _lessons(tmp_path, ["lookup", "gradient"])
    with pytest.raises(ValueError, match="01 lookup, 02 gradient"):
        find_lesson("9", folder)


def test_progress_kept_under_a_numbered_name_is_read_under_the_slug(tmp_path):
    folder = tmp_path / "progress"
    folder.mkdir()
    (folder / "path.json").write_text(
        '{"lesson:05-lm-head-and-logits": {"status": "read"},'
        ' "break:tie-by-copy": {"status": "skipped"}}', encoding="utf-8")
    (folder / "quiz.json").write_text(
        '{"04-softmax-cross-entropy": {"status": "attempted", "attempts": 2},'
        ' "phase-13-embeddings": {"status": "passed"}}', encoding="utf-8")
    progress = Progress(tmp_path)
    assert progress.get("path", "lesson:lm-head-and-logits") == {"status": "read"}
    assert progress.get("quiz", "softmax-cross-entropy")["attempts"] == 2
    assert set(progress.all("quiz")) == {"softmax-cross-entropy", "phase-13-embeddings"}
    progress.record("quiz", "softmax-cross-entropy", "passed")      # saved under the slug
    assert '"04-softmax' not in (folder / "quiz.json").read_text(encoding="utf-8")
