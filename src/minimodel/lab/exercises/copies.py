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

The same tree is a copy only when the solution has *substance*: at least :data:`MIN_STATEMENTS`
statements (imports, ``def`` lines and docstrings aside). A function of one statement is a single
``return`` of an expression, and where the statement prints the formula (``logits = h @
E.T``, ``E[ids]``) that expression is what an honest learner types too: the tree cannot tell
the two apart, so it decides nothing. With two statements or more, the names of the
intermediate values and where the work is split are the author's choices, and an honest file
that repeats every one of them is not to be expected. A one-statement solution is still
recognised when the file carries one of its own docstrings word for word (whitespace aside):
the mark of the reference's file pasted whole, which an honest learner never types.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from minimodel.lab import integrity
from minimodel.lab.exercises.registry import Exercise
from minimodel.lab.pyparse import normalised, parse_python

# A solution of fewer statements is a formula: the same tree is no evidence of a copy.
MIN_STATEMENTS = 2


@dataclass(frozen=True)
class LabSolution:
    """What identifies one of the lab's solution files as the source of a checked file."""

    statements: int                 # its statements, imports, defs and docstrings aside
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


def _statements(tree: ast.AST) -> int:
    """The program's statements: imports, ``def``/``class`` lines, docstrings and the
    ``FRAMEWORK`` switch aside (``return h @ E.T`` alone is 1)."""
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.stmt) and not isinstance(
        node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and not _is_string_statement(node) and not _is_framework_switch(node))


def _is_framework_switch(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and len(node.targets) == 1 \
        and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "FRAMEWORK"


def _is_string_statement(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
        and isinstance(node.value.value, str)


@functools.lru_cache(maxsize=32)
def _lab_solutions(folder: str, files: tuple[str, ...]) -> dict[str, LabSolution]:
    """Each file of ``files`` (read as the manifest vouches for it) by its normalised source."""
    found: dict[str, LabSolution] = {}
    for name in files:
        text = integrity.verified_bytes(Path(name)).decode("utf-8-sig")
        key = normalised(text)
        if key is not None:
            tree = parse_python(text)
            found[key] = LabSolution(_statements(tree), _docstrings(tree))
    return found


def lab_solution_files(ex: Exercise) -> list[str]:
    """The reference of ``ex`` (its module, for a library reference) and its alternatives."""
    return [str(ex.reference_path)] + [str(ex.folder / "alternatives" / name)
                                       for name in ex.alternatives]


def is_lab_copy(ex: Exercise, source: str) -> bool:
    """Is ``source`` the reference or an alternative of ``ex``: the same normalised program,
    and either a solution of substance (:data:`MIN_STATEMENTS`) or carrying its docstrings?"""
    mine = normalised(source)
    if mine is None:
        return False
    solution = _lab_solutions(str(ex.folder), tuple(lab_solution_files(ex))).get(mine)
    if solution is None:
        return False
    if solution.statements >= MIN_STATEMENTS:
        return True
    return bool(solution.docstrings & _docstrings(parse_python(source)))
