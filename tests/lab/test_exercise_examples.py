"""Every exercise statement shows a public example with concrete values, and its printed
output is what the reference solution returns (run here as a doctest, in both languages)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from minimodel.lab.exercises.registry import all_exercises

EXERCISES = all_exercises()


def example_lines(text: str) -> list[str]:
    """The doctest lines (>>> , ... and the expected output) of a statement."""
    lines, inside = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>> "):
            inside = True
        elif not stripped:
            inside = False
        if inside:
            lines.append(stripped)
    return lines


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.id for e in EXERCISES])
def test_statement_example_is_the_reference_output(exercise):
    english = example_lines(exercise.statement["en"])
    assert any(line.startswith(">>> ") and exercise.function + "(" in line for line in english)
    assert example_lines(exercise.statement["es"]) == english   # one example, both languages
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(verbose=False)
    test = parser.get_doctest("\n".join(english), {"np": np, exercise.function:
                                                   exercise.reference_function()},
                              exercise.id, None, 0)
    failures: list[str] = []
    runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)


def test_a_wrong_output_in_a_statement_is_caught():
    exercise = next(e for e in EXERCISES if e.id == "embedding-lookup")
    wrong = "\n".join(example_lines(exercise.statement["en"])).replace("[4.0, 5.0]]]",
                                                                      "[4.0, 4.0]]]")
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(doctest.DocTestParser().get_doctest(
        wrong, {"np": np, "embed": exercise.reference_function()}, "x", None, 0),
        out=lambda _text: None)
    assert runner.failures == 1
