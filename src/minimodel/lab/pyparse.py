"""Parse Python source safely from several threads at once (``lab validate`` uses a pool).

CPython before 3.11.8 / 3.12.1 keeps the depth counter of its AST conversion in
interpreter-wide state (gh-106905): two threads parsing at once can fail with a spurious
``SystemError: AST constructor recursion depth mismatch``. A lock covers our own parses; parses
outside it (3.11's ``traceback`` places its ``^^^`` markers by parsing) can still collide, and
since the counter is reset on every parse, a retry gives the right tree.
"""

from __future__ import annotations

import ast
import threading

_PARSE_LOCK = threading.RLock()  # re-entrant: a finaliser run mid-parse may parse too
_ATTEMPTS = 5  # against parses outside the lock (gh-106905); each attempt is independent


def parse_python(source: str | bytes, filename: str = "<unknown>",
                 mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)``, one thread at a time. ``bytes`` are decoded as
    Python decodes a source file (BOM, coding cookie). Raises SyntaxError/ValueError as
    ``ast.parse`` does."""
    with _PARSE_LOCK:
        for _ in range(_ATTEMPTS - 1):
            try:
                return ast.parse(source, filename, mode)
            except SystemError as exc:
                if "recursion depth mismatch" not in str(exc):
                    raise
        return ast.parse(source, filename, mode)  # the last attempt: its error surfaces
