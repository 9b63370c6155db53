"""The README's table of lessons, generated from the path (``lab/content/path.yaml``) and each
lesson's titles and front matter, so that inserting a lesson never leaves the README behind.

    python scripts/readme_lessons.py           # rewrite the table between the markers
    python scripts/readme_lessons.py --check   # exit 1 when the README's table is stale

``tests/commands/test_readme_commands.py`` fails when the README's table differs from this.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from minimodel.lab.lessons import Lesson, load_lessons

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- lessons:begin -->", "<!-- lessons:end -->"
LESSON_LINK = "src/minimodel/lab/content/lessons/{slug}.md"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}s" if count > 1 else f"1 {word}"


def practice(lesson: Lesson) -> str:
    """What the lab adds after a lesson: its questions, break and exercises."""
    parts = [_plural(len(lesson.quiz), "question") if lesson.quiz else "",
             _plural(len(lesson.breaks), "break") if lesson.breaks else "",
             _plural(len(lesson.exercises), "exercise") if lesson.exercises else ""]
    return ", ".join(part for part in parts if part) or "-"


def lesson_table(lessons: list[Lesson]) -> str:
    """One row per lesson, in the path's order: number, English and Spanish titles, practice."""
    rows = ["| # | lesson | en español | then, in the lab |", "|---:|---|---|---|"]
    for lesson in lessons:
        link = LESSON_LINK.format(slug=lesson.slug)
        rows.append(f"| {lesson.number} | [{lesson.titles['en']}]({link}) | "
                    f"{lesson.titles.get('es', '')} | {practice(lesson)} |")
    return "\n".join(rows)


def with_table(readme: str, table: str) -> str:
    """``readme`` with the text between the two markers replaced by ``table``."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1:
        raise ValueError(f"README.md needs one {BEGIN} and one {END}")
    head, rest = readme.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    new = with_table(text, lesson_table(load_lessons()))
    if new == text:
        print("the README's lesson table is up to date")
        return 0
    if args.check:
        print("the README's lesson table is stale: run python scripts/readme_lessons.py",
              file=sys.stderr)
        return 1
    README.write_text(new, encoding="utf-8")
    print("rewrote the README's lesson table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
