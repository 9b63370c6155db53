"""A lesson as a Jupyter notebook, generated from the lesson's one source (never a copy).

The lesson's Markdown (front matter removed) is read by jupytext's Markdown reader: each
``python`` block becomes a code cell, everything else a Markdown cell; the ``output`` blocks
are dropped (the cell prints them when it runs), blocks in other languages (``bash``,
``text``) stay Markdown, code links by symbol become plain code names and links to other
lessons point at their notebooks. Then, for each exercise the lesson's front matter lists:
its statement, a stub cell to fill in, and a cell that checks it through the judge
(:mod:`minimodel.lab.notebook`): ``ex.check(fn)``, ``ex.hint()``, ``ex.solution()``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext  # the notebook extra: imported only by the commands that write notebooks
import nbformat

from minimodel._fileio import atomic_write_text
from minimodel.lab.exercises import get_exercise, stub_text
from minimodel.lab.lessons import (Lesson, code_blocks, split_front_matter,
                                   without_output_blocks)
from minimodel.lab.next_links import next_markdown
from minimodel.lab.output_check import compare, parse_mark
from minimodel.lab.pyparse import parse_python
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

_CODE_LINK = re.compile(r"\[(`[^`\]]+`|[^\]]+)\]\[minimodel(?:\.\w+)+\]")
_LESSON_LINK = re.compile(r"\]\(([a-z][\w-]*)\.md(#[\w-]*)?\)")   # another lesson: slug.md
_ADMONITION = re.compile(r'^(!!!|\?\?\?\+?) (\w+)(?: "([^"]*)")?\n((?:(?:    .*)?\n)+)', re.M)
_MAGIC = re.compile(r"^%%(\w+)\n")


def _admonition_as_quote(found: re.Match) -> str:
    """``!!! note "Title"`` + indented body (mkdocs) as a quote Jupyter renders."""
    title = found.group(3) or found.group(2).capitalize()
    body = "\n".join(line[4:] for line in found.group(4).rstrip("\n").splitlines())
    return "> **" + title + "**\n>\n" + "\n".join(f"> {line}".rstrip() for line in
                                                   body.splitlines()) + "\n"


def notebook_markdown(text: str, lang: str = "en") -> str:
    """A lesson's Markdown made ready for jupytext: no front matter, no output blocks, no
    site-only syntax."""
    _, body = split_front_matter(without_output_blocks(text, lang))
    body = _CODE_LINK.sub(r"\1", body)
    return _ADMONITION.sub(_admonition_as_quote, _to_notebooks(body, lang))


def _to_notebooks(text: str, lang: str) -> str:
    """Links to other lessons (``slug.md``) as links to their notebooks."""
    suffix = ".ipynb" if lang == "en" else f".{lang}.ipynb"
    return _LESSON_LINK.sub(lambda m: f"]({m.group(1)}{suffix}{m.group(2) or ''})", text)


def _shown_code_as_markdown(notebook: nbformat.NotebookNode) -> None:
    """jupytext turns a ```bash block into a ``%%bash`` code cell; a lesson's shell commands
    are for reading, so they go back into the Markdown around them."""
    cells: list[nbformat.NotebookNode] = []
    for cell in notebook.cells:
        magic = _MAGIC.match(cell.source) if cell.cell_type == "code" else None
        if magic:
            cell = nbformat.v4.new_markdown_cell(
                f"```{magic.group(1)}\n{cell.source[magic.end():]}\n```")
        if cells and cell.cell_type == "markdown" and cells[-1].cell_type == "markdown":
            cells[-1].source += "\n\n" + cell.source
        else:
            cells.append(cell)
    notebook.cells = cells


def _stub_without_header(exercise_id: str, lang: str) -> str:
    """The exercise's starter file without its module docstring (which speaks of files and
    commands; in a notebook the check cell follows)."""
    text = stub_text(get_exercise(exercise_id, lang), lang)
    first = parse_python(text).body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
        text = "\n".join(text.splitlines()[first.end_lineno:])
    return text.strip("\n") + "\n"


def exercise_cells(exercise_id: str, lang: str) -> list[nbformat.NotebookNode]:
    """Statement, stub and check cells for one exercise."""
    ex = get_exercise(exercise_id, lang)
    statement = (f"## {say('site.notebook.exercise', lang)}: {ex.text('title', lang)}\n\n"
                 f"`{ex.id}`\n\n{ex.text('statement', lang).strip()}\n\n"
                 + say("site.notebook.fill_in", lang,
                       command=Suggest(lang)("exercise", "check", ex.id)))
    check = (f'from minimodel.lab.notebook import exercise\n\n'
             f'ex = exercise("{ex.id}", lang="{lang}")\nex.check({ex.function})')
    more = f"{say('site.notebook.more', lang)}\n# ex.hint()\n# ex.solution()"
    return [nbformat.v4.new_markdown_cell(statement),
            nbformat.v4.new_code_cell(_stub_without_header(ex.id, lang)),
            nbformat.v4.new_code_cell(check), nbformat.v4.new_code_cell(more)]


def lesson_notebook(lesson: Lesson, lang: str = "en",
                    lessons_dir: Path | None = None) -> nbformat.NotebookNode:
    """The notebook of ``lesson`` in ``lang``."""
    path = lesson.path(lang) if lessons_dir is None else lesson.path(lang, lessons_dir)
    if not path.is_file():
        raise ValueError(f"lesson {lesson.stem} has no {lang} version ({path} is missing)")
    notebook = jupytext.reads(notebook_markdown(path.read_text(encoding="utf-8"), lang),
                              fmt="md")
    _shown_code_as_markdown(notebook)
    for exercise_id in lesson.exercises:
        notebook.cells += exercise_cells(exercise_id, lang)
    following = next_markdown(lesson, lang, *([lessons_dir] if lessons_dir else []))
    if following:       # generated from path.yaml, as the page's last line
        notebook.cells.append(nbformat.v4.new_markdown_cell(_to_notebooks(following, lang)))
    notebook.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"},
                         "language_info": {"name": "python"},
                         "minimodel": {"lesson": lesson.stem, "lang": lang}}
    return notebook


def notebook_name(lesson: Lesson, lang: str) -> str:
    """``lm-head-and-logits.ipynb``, ``lm-head-and-logits.es.ipynb``."""
    return f"{lesson.stem}.ipynb" if lang == "en" else f"{lesson.stem}.{lang}.ipynb"


def write_notebook(lesson: Lesson, lang: str, out_dir: Path, force: bool = False,
                   lessons_dir: Path | None = None) -> tuple[Path, bool]:
    """Write the lesson's notebook into ``out_dir``; ``(path, written)``.

    An existing notebook is the learner's work: it is kept (``written`` False) unless
    ``force``.
    """
    path = Path(out_dir) / notebook_name(lesson, lang)
    if path.exists() and not force:
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, nbformat.writes(lesson_notebook(lesson, lang, lessons_dir)))
    return path, True


def printed_by_cell(cell: nbformat.NotebookNode) -> str:
    """What an executed code cell printed to stdout (a trailing expression's value, which a
    lesson's runner does not show, is left out)."""
    return "".join(out.get("text", "") for out in cell.get("outputs", [])
                   if out.get("output_type") == "stream" and out.get("name") == "stdout")


def notebook_output_problems(notebook: nbformat.NotebookNode,
                             lesson_path: Path) -> tuple[list[str], list[str]]:
    """``(problems, drifts)`` of an executed lesson notebook against the lesson's ``output``
    blocks, judged exactly as the lesson check judges the lesson
    (:mod:`minimodel.lab.output_check`): so the notebook's numbers and the page agree, within
    the tolerance the page states."""
    blocks = code_blocks(lesson_path.read_text(encoding="utf-8"))
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"][:len(blocks)]
    problems: list[str] = []
    drifts: list[str] = []
    for block, cell in zip(blocks, cells):
        where = f"{lesson_path.name}:{block.line} (notebook)"
        if cell.source.strip() != block.code.strip():
            problems.append(f"{where}: the notebook's cell is not the lesson's block")
            continue
        if block.expected is None:
            continue
        mark = parse_mark(block.mark)
        verdict = compare(block.expected, printed_by_cell(cell), mark)
        if verdict.kind == "content":
            problems.append(f"{where}: the cell printed other than the ```output block "
                            f"({verdict.reason}):\n{printed_by_cell(cell)}")
        elif verdict.kind == "drift":
            drifts.append(f"{where}: numbers drifted beyond the tolerance: "
                          + verdict.summary(mark))
    return problems, drifts
