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
"""

from __future__ import annotations

import functools
from pathlib import Path

from minimodel.lab import integrity
from minimodel.lab.exercises.registry import Exercise
from minimodel.lab.pyparse import normalised


@functools.lru_cache(maxsize=32)
def _lab_solutions(folder: str, files: tuple[str, ...]) -> frozenset[str]:
    """The normalised sources of ``files`` (read as the manifest vouches for them)."""
    found = set()
    for name in files:
        text = integrity.verified_bytes(Path(name)).decode("utf-8-sig")
        tree = normalised(text)
        if tree is not None:
            found.add(tree)
    return frozenset(found)


def lab_solution_files(ex: Exercise) -> list[str]:
    """The reference of ``ex`` (its module, for a library reference) and its alternatives."""
    return [str(ex.reference_path)] + [str(ex.folder / "alternatives" / name)
                                       for name in ex.alternatives]


def is_lab_copy(ex: Exercise, source: str) -> bool:
    """Is ``source`` the reference or an alternative of ``ex``, normalised?"""
    mine = normalised(source)
    return mine is not None and mine in _lab_solutions(str(ex.folder),
                                                       tuple(lab_solution_files(ex)))
