"""Parse Python source safely from several threads at once.

``lab validate`` checks exercises and breaks on a thread pool, and each check parses learner or
reference source with :func:`ast.parse`. CPython before 3.11.8 / 3.12.1 keeps the depth counter
of its AST conversion in interpreter-wide state (CPython issue gh-106905): two threads parsing
at the same moment can corrupt each other's count and one of them fails with
``SystemError: AST constructor recursion depth mismatch``. A lock around our own parses costs
nothing measurable (parsing is milliseconds), but it cannot cover every parse in the process:
Python 3.11's ``traceback`` module parses source lines to place its ``^^^`` markers, in whatever
thread formats an exception. The counter is reset at the start of every parse, so the error is
spurious and a second attempt gives the right tree: we retry a few times before giving up.
"""

from __future__ import annotations

import ast
import threading

_PARSE_LOCK = threading.RLock()  # re-entrant: a finaliser run mid-parse may parse too
_ATTEMPTS = 5  # against parses outside the lock (gh-106905); each attempt is independent


def parse_python(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)``, one thread at a time. Raises SyntaxError/ValueError
    as ``ast.parse`` does."""
    with _PARSE_LOCK:
        for _ in range(_ATTEMPTS - 1):
            try:
                return ast.parse(source, filename, mode)
            except SystemError as exc:
                if "recursion depth mismatch" not in str(exc):
                    raise
        return ast.parse(source, filename, mode)  # the last attempt: its error surfaces
