"""Every exercise statement shows a public example with concrete values, and its printed
output is what the reference solution returns (run as a doctest, in both languages). The rule
lives in `lab validate` (lab.exercises.statement_example); these tests run it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from minimodel.lab.exercises.registry import all_exercises
from minimodel.lab.exercises.statement_example import (doctest_failures, example_lines,
                                                       example_problems)

EXERCISES = all_exercises()


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.id for e in EXERCISES])
def test_statement_example_is_the_reference_output(exercise):
    assert example_problems(exercise) == []


def test_a_wrong_output_in_a_statement_is_caught():
    exercise = next(e for e in EXERCISES if e.id == "embedding-lookup")
    wrong = "\n".join(example_lines(exercise.statement["en"])).replace("[4.0, 5.0]]]",
                                                                      "[4.0, 4.0]]]")
    assert len(doctest_failures(exercise, wrong.splitlines())) == 1
    statement = {lang: text.replace("[4.0, 5.0]]]", "[4.0, 4.0]]]")
                 for lang, text in exercise.statement.items()}
    [problem] = example_problems(replace(exercise, statement=statement))
    assert problem.startswith("embedding-lookup: the statement's example is not what the "
                              "reference returns") and "[4.0, 4.0]]]" in problem


def test_a_missing_or_untranslated_example_is_named_with_its_fix():
    exercise = next(e for e in EXERCISES if e.id == "embedding-lookup")
    bare = replace(exercise, statement={"en": "Look up rows.", "es": "Indexa filas."})
    assert example_problems(bare) == [
        "embedding-lookup: the English statement shows no example; add a '>>> embed(...)' line "
        "with concrete values and, under it, what the reference returns (the doctest is run "
        "against reference.py)"]
    english = exercise.statement["en"]
    apart = replace(exercise, statement={"en": english, "es": english.replace(">>> ", ">>>  ")})
    assert example_problems(apart) == [
        "embedding-lookup: the Spanish statement's example differs from the English one; copy "
        "the English '>>>' lines and their output unchanged"]
