"""Parse Python source safely from several threads at once.

``lab validate`` checks exercises and breaks on a thread pool, and each check parses learner or
reference source with :func:`ast.parse`. CPython before 3.11.8 / 3.12.1 keeps the depth counter
of its AST conversion in interpreter-wide state (CPython issue gh-106905): two threads parsing
at the same moment can corrupt each other's count and one of them fails with
``SystemError: AST constructor recursion depth mismatch``. A lock around the parse costs
nothing measurable (parsing is milliseconds) and makes the result independent of timing.
"""

from __future__ import annotations

import ast
import threading

_PARSE_LOCK = threading.RLock()  # re-entrant: a finaliser run mid-parse may parse too


def parse_python(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)``, one thread at a time. Raises SyntaxError/ValueError
    as ``ast.parse`` does."""
    with _PARSE_LOCK:
        return ast.parse(source, filename, mode)
