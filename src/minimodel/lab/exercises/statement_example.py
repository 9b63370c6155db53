"""Every exercise statement shows one public example with concrete values, run as a doctest.

The example is the statement's ``>>>`` lines and the output printed under them, the same in
both languages (numbers are code, not prose)::

    >>> embed(np.array([[0, 2]]), np.array([[0., 1.], [2., 3.], [4., 5.]]))
    array([[[0., 1.],
            [4., 5.]]])

:func:`example_problems` (``lab validate --section exercises``) runs it against the reference
solution, so a statement can never show an output its own reference does not give.
"""

from __future__ import annotations

import doctest

import numpy as np

from minimodel.lab.exercises.registry import Exercise


def example_lines(text: str) -> list[str]:
    """The doctest lines (``>>>``, ``...`` and the expected output) of a statement: from each
    ``>>>`` line to the next blank line, stripped of their indent."""
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


def doctest_failures(ex: Exercise, lines: list[str], function=None) -> list[str]:
    """What the doctest runner reports for ``lines`` run with the reference (or
    ``function``) under the exercise's function name, and ``np``."""
    namespace = {"np": np, ex.function: function or ex.reference_function()}
    test = doctest.DocTestParser().get_doctest("\n".join(lines), namespace, ex.id, None, 0)
    failures: list[str] = []
    doctest.DocTestRunner(verbose=False).run(test, out=failures.append)
    return failures


def example_problems(ex: Exercise) -> list[str]:
    """The statement's example: present, the same in both languages, and what the reference
    prints."""
    english = example_lines(ex.statement["en"])
    if not any(line.startswith(">>> ") and f"{ex.function}(" in line for line in english):
        return [f"{ex.id}: the English statement shows no example; add a '>>> {ex.function}(...)' "
                "line with concrete values and, under it, what the reference returns (the "
                "doctest is run against reference.py)"]
    problems = []
    if example_lines(ex.statement["es"]) != english:
        problems.append(f"{ex.id}: the Spanish statement's example differs from the English "
                        "one; copy the English '>>>' lines and their output unchanged")
    failures = doctest_failures(ex, english)
    if failures:
        problems.append(f"{ex.id}: the statement's example is not what the reference returns; "
                        "write the reference's output under the '>>>' line:\n"
                        + "".join(failures).strip())
    return problems
