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

The same tree is a copy when it carries a choice of the solution's author that the statement
does not dictate:

* one of the solution's own docstrings, word for word (whitespace aside): the mark of the lab's
  file pasted whole, which an honest learner never types (the starter file has docstrings of
  its own, never the solution's); or
* a name of the author's: a local name of two characters or more that neither the English nor
  the Spanish statement writes (``lse`` and ``keep`` in cross-entropy, ``p_next`` in the
  bigram loss). An honest file that repeats the whole tree *and* such names is not to be
  expected, so a paste with its docstrings stripped is still practice.

Where every name of the solution is given by the statement or is a single letter
(``return h @ E.T``; the one-hot lookup's ``V = E.shape[0]``, ``onehot = ...``,
``return onehot @ E``; layer norm's ``mean``, ``var``, ``y``; gelu's ``c = math.sqrt(2 /
math.pi)``), an honest learner types the lab's tree to the letter: that tree decides nothing,
and the pass is the learner's unless the file carries the solution's docstring.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from minimodel.lab import integrity
from minimodel.lab.exercises.registry import Exercise
from minimodel.lab.pyparse import normalised, parse_python


@dataclass(frozen=True)
class LabSolution:
    """What identifies one of the lab's solution files as the source of a checked file."""

    docstrings: frozenset[str]      # its own docstrings, whitespace collapsed
    own_names: frozenset[str]       # local names of two letters or more the statement does not write


def _docstrings(tree: ast.AST) -> frozenset[str]:
    """The module's, classes' and functions' docstrings, each with its whitespace collapsed."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc and doc.strip():
                found.add(" ".join(doc.split()))
    return frozenset(found)


def _stored_names(tree: ast.AST) -> set[str]:
    """The names the program assigns (its locals and module constants)."""
    return {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


@functools.lru_cache(maxsize=32)
def _lab_solutions(folder: str, files: tuple[str, ...],
                   statement: str) -> dict[str, LabSolution]:
    """Each file of ``files`` (read as the manifest vouches for it) by its normalised source;
    ``statement`` is the exercise's statement text, in every language."""
    given = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", statement))
    found: dict[str, LabSolution] = {}
    for name in files:
        text = integrity.verified_bytes(Path(name)).decode("utf-8-sig")
        key = normalised(text)
        if key is not None:
            tree = parse_python(text)
            own = {n for n in _stored_names(tree) - given if len(n) > 1 and n != "FRAMEWORK"}
            found[key] = LabSolution(_docstrings(tree), frozenset(own))
    return found


def lab_solution_files(ex: Exercise) -> list[str]:
    """The reference of ``ex`` (its module, for a library reference) and its alternatives."""
    return [str(ex.reference_path)] + [str(ex.folder / "alternatives" / name)
                                       for name in ex.alternatives]


def is_lab_copy(ex: Exercise, source: str) -> bool:
    """Is ``source`` the reference or an alternative of ``ex``: the same normalised program,
    with a name of the author's or one of that solution's own docstrings?"""
    mine = normalised(source)
    if mine is None:
        return False
    statement = " ".join(ex.text("statement", lang) for lang in ("en", "es"))
    solution = _lab_solutions(str(ex.folder), tuple(lab_solution_files(ex)), statement).get(mine)
    if solution is None:
        return False
    return bool(solution.own_names) or bool(solution.docstrings
                                           & _docstrings(parse_python(source)))
