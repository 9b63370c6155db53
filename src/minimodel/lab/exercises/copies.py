"""Is a checked file a copy of one of the lab's own solutions? Recognised by content, not path.

A pass is the learner's when they wrote the function. The lab ships a reference solution for
every exercise (and alternatives, different correct solutions); a copy of one of them checked
from anywhere (the package's own file, a clone's ``src/``, a file pasted into a folder of the
learner's) is practice, never a recorded pass.

Two files are the same solution when their *normalised source* is the same
(:func:`minimodel.lab.pyparse.normalised`): the syntax tree,
without comments, docstrings, blank lines, formatting, quote style or a coding cookie, and
without an ``if __name__ == "__main__":`` block (which the judge never runs). The names and the
statements stay: the reference's algorithm typed again in one's own way (other names, another
order, a loop for a comprehension) is a different tree, and the learner's own work.

The same tree is a copy only when the file also carries one of the solution's own docstrings
word for word (whitespace aside): the mark of the lab's file pasted whole, which an honest
learner never types (the starter file has docstrings of its own, never the solution's). The
tree alone decides nothing: where the statement prints the formula and names its values
(``V = E.shape[0]``, ``onehot = ...``, ``return onehot @ E``; ``c = math.sqrt(2 / math.pi)``),
an honest learner types the lab's tree exactly, and a pass is never taken from honest work.
A paste with the docstrings stripped is deliberate, and out of scope like any other deliberate
evasion on one's own machine (docs/judge.md).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from minimodel.lab import integrity
from minimodel.lab.exercises.registry import Exercise
from minimodel.lab.pyparse import normalised, parse_python


@dataclass(frozen=True)
class LabSolution:
    """What identifies one of the lab's solution files as the source of a checked file."""

    docstrings: frozenset[str]      # its own docstrings, whitespace collapsed


def _docstrings(tree: ast.AST) -> frozenset[str]:
    """The module's, classes' and functions' docstrings, each with its whitespace collapsed."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc and doc.strip():
                found.add(" ".join(doc.split()))
    return frozenset(found)


@functools.lru_cache(maxsize=32)
def _lab_solutions(folder: str, files: tuple[str, ...]) -> dict[str, LabSolution]:
    """Each file of ``files`` (read as the manifest vouches for it) by its normalised source."""
    found: dict[str, LabSolution] = {}
    for name in files:
        text = integrity.verified_bytes(Path(name)).decode("utf-8-sig")
        key = normalised(text)
        if key is not None:
            tree = parse_python(text)
            found[key] = LabSolution(_docstrings(tree))
    return found


def lab_solution_files(ex: Exercise) -> list[str]:
    """The reference of ``ex`` (its module, for a library reference) and its alternatives."""
    return [str(ex.reference_path)] + [str(ex.folder / "alternatives" / name)
                                       for name in ex.alternatives]


def is_lab_copy(ex: Exercise, source: str) -> bool:
    """Is ``source`` the reference or an alternative of ``ex``: the same normalised program,
    carrying one of that solution's own docstrings?"""
    mine = normalised(source)
    if mine is None:
        return False
    solution = _lab_solutions(str(ex.folder), tuple(lab_solution_files(ex))).get(mine)
    if solution is None:
        return False
    return bool(solution.docstrings & _docstrings(parse_python(source)))
