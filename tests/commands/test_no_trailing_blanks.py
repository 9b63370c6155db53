"""Output into a pipe or a file has no blanks at the ends of its lines (Rich pads panels,
tables and padded text to the console's width: up to 80 spaces a line), in both languages."""

from __future__ import annotations

import io
import json

import pytest
from rich.panel import Panel
from rich.table import Table

from minimodel._console import Console
from minimodel.cli import main
from minimodel.lab import quiz

QUIZ_ID = "phase-13-embeddings"


@pytest.fixture(autouse=True)
def learner(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))


def one_wrong_answers(path) -> str:
    """An answers file with the first question (a single choice) wrong: the end screen then
    shows the padded block of a missed question."""
    questions = quiz.load_quiz(QUIZ_ID).questions
    answers = {q.id: (q.answer["value"] if q.kind == "numeric" else q.answer["en"][0]
                      if q.kind == "short" else True if q.kind == "recall" else q.answer)
               for q in questions}
    first = questions[0]
    answers[first.id] = (first.answer + 1) % len(first.choices)
    path.write_text(json.dumps(answers), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("argv, shows", [
    (["lab", "status"], "embedding-lookup"),
    (["lab", "next"], "minimodel"),
    (["exercise", "list"], "gelu-tanh"),
    (["break", "list"], "frequent-tokens-learn-slowly"),
    (["quiz", "take", QUIZ_ID, "--answers", "{answers}"], "q-13-01"),
])
def test_no_line_ends_in_blanks(capsys, tmp_path, lang, argv, shows):
    answers = one_wrong_answers(tmp_path / "answers.json")
    code = main([a.format(answers=answers) for a in argv] + ["--lang", lang])
    out = capsys.readouterr().out
    assert code == 0 and shows in out
    padded = [line for line in out.splitlines() if line != line.rstrip()]
    assert padded == [], padded[:3]


def test_the_console_strips_line_ends_but_not_a_prompt_nor_a_terminal():
    table = Table(title="breaks")
    table.add_column("id")
    table.add_row("short")
    piped = io.StringIO()
    console = Console(file=piped, width=30)
    console.print(Panel("a lookup is a row of E"), table)
    console.print("Your answer: ", end="")          # the prompt's space stays: text follows
    assert piped.getvalue() == ("╭────────────────────────────╮\n"
                                "│ a lookup is a row of E     │\n"   # inside the panel: kept
                                "╰────────────────────────────╯\n"
                                " breaks\n"                            # was " breaks  "
                                "┏━━━━━━━┓\n┃ id    ┃\n┡━━━━━━━┩\n│ short │\n└───────┘\n"
                                "Your answer: ")
    screen = io.StringIO()   # a terminal: the padding erases a live display's older lines
    Console(file=screen, width=30, force_terminal=True, color_system=None).print(table)
    assert screen.getvalue().split("\n")[0] == " breaks  "
