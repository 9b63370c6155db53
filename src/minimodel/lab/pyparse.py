"""Parse Python source safely from several threads at once (``lab validate`` uses a pool), and
compare two sources as programs (:func:`normalised`).

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


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
        and isinstance(node.value.value, str)


def is_main_test(test: ast.expr | None) -> bool:
    """Is ``test`` true only when the file runs as a script: ``__name__ == "__main__"`` (either
    order) or ``__name__`` in a literal tuple, list or set holding only ``"__main__"``?"""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, right = test.left, test.comparators[0]
    if isinstance(test.ops[0], ast.Eq):
        sides = [left, right]
        return any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides) and any(
            isinstance(b, ast.Constant) and b.value == "__main__" for b in sides)
    return isinstance(test.ops[0], ast.In) and isinstance(left, ast.Name) \
        and left.id == "__name__" and isinstance(right, (ast.Tuple, ast.List, ast.Set)) \
        and bool(right.elts) and all(isinstance(e, ast.Constant) and e.value == "__main__"
                                     for e in right.elts)


def _is_main_block(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and is_main_test(node.test)


class _Strip(ast.NodeTransformer):
    """Drops string statements (docstrings, strings used as comments) and main blocks."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                kept = [s for s in body if not (_is_docstring(s) or _is_main_block(s))]
                setattr(node, field, kept or [ast.Pass()])
        return node


def normalised(source: str) -> str | None:
    """The source's syntax tree as text, without what does not change the program: comments,
    docstrings (and other string statements), blank lines, layout, quote style, a coding
    cookie, an ``if __name__ == "__main__":`` block. Names and statements stay. None for a
    file that does not parse. Two files with the same result are the same program (a copy of
    a lab solution, :mod:`minimodel.lab.exercises.copies`; a break's shown fix pasted back)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return None
    return ast.dump(_Strip().visit(tree), annotate_fields=False, include_attributes=False)
