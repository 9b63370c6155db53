"""Refuse workspace edits that reach into the check machinery instead of fixing the library.

The invariants run in the same process as the learner's copy of minimodel (they must import it
to test it), so code added there could patch the checks in memory, print a verdict or exit 0
early. The runner keeps the harness and invariants out of the workspace and tokens its verdict
lines; this scan closes the rest. Before ``break check``, every Python file the learner changed
or added is parsed, and names a fix of these bugs never needs but a forged verdict does (the
harness and checks; ``sys.modules``, frames, tracing, ``gc``, ``atexit``, ``builtins``, import
hooks, ``exec``/``eval``; exiting, writing to stdout/stderr, signals, subprocesses, ``ctypes``)
are refused unless the original file already used them.

Names are not the only way in: the checks use numpy (and ``math``, ``operator``...) in the same
process, so ``np.allclose = lambda *a, **k: True`` in a library file forges every comparison
after it. :func:`_module_writes` refuses the class: a write to an attribute of an imported
name or of anything reached through one (``np.allclose = f``, ``np.x += 1``, ``del np.x``,
``setattr(np, "isclose", f)``, ``vars(np)["x"] = f``, ``np.__dict__``, a minimodel module's
``np`` global as ``embedding.np.allclose = f``), also through a plain alias (``m = np``,
``for m in (np,)``). Honest fixes write ``self.*``, a parameter's ``.grad``/``.data``, local
objects and the file's own globals, none of which is an imported name. As for names, a write
the original file already made (the same spelling) is not a finding.

The scan fails closed: it reads a file's bytes the way Python's importer does (a UTF-8 BOM, else
a PEP 263 coding cookie in the first two lines, else UTF-8) and parses those same bytes, so a
BOM or a ``# -*- coding: latin-1 -*-`` file is scanned, not skipped. A file it cannot decode is
itself a finding (:class:`Unreadable`, "save it as UTF-8"). A file that decodes but does not
parse is left to the checks, which report the SyntaxError: Python compiles the bytes it imports
with the same parser (``compile(bytes)``), so a file that does not parse cannot run, and a
module that fails to import runs none of its code.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from minimodel.lab.pyparse import parse_python
from minimodel.messages import say

# Identifiers, attribute names and imported modules a library fix never needs.
SUSPICIOUS = frozenset({
    "minimodel_break_harness", "invariants", "harness", "Checks", "CheckFailed", "TOKEN",
    "_run_one", "failing", "finish", "conclude",
    "modules", "_getframe", "settrace", "setprofile", "gettrace", "f_back", "f_globals",
    "f_locals", "gc", "get_objects", "get_referrers", "atexit", "builtins", "__builtins__",
    "meta_path", "path_hooks", "importlib", "__import__", "exec", "eval", "compile",
    "globals", "_exit", "exit", "quit", "abort", "kill", "stdout", "stderr", "__stdout__",
    "__stderr__", "signal", "subprocess", "system", "popen", "ctypes", "inspect",
})


@dataclass(frozen=True)
class Finding:
    path: str  # relative to the workspace, e.g. "minimodel/nn/lm_head.py"
    line: int
    name: str

    def __str__(self) -> str:
        return f"`{self.name}` at {self.path}:{self.line}"


@dataclass(frozen=True)
class Unreadable:
    """A changed ``.py`` file the scan cannot decode as Python source, so cannot vouch for."""

    path: str
    line: int  # where decoding failed (0: the file as a whole, e.g. an unknown coding)
    detail: str  # Python's words: "unknown encoding: foo", "byte 0xe9 is not utf-8"

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.detail})"


def python_encoding(data: bytes) -> str:
    """The encoding Python reads the source ``data`` with (``tokenize.detect_encoding``):
    ``"utf-8-sig"`` after a UTF-8 BOM, the coding cookie's (``# -*- coding: latin-1 -*-`` ->
    ``"iso-8859-1"``), else ``"utf-8"``. Raises SyntaxError for an unknown or conflicting
    declaration, as the importer does."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding


def unreadable(rel: str, data: bytes) -> Unreadable | None:
    """Why Python's importer could not decode ``data``, or None if it can."""
    try:
        encoding = python_encoding(data)
    except SyntaxError as exc:  # unknown coding, BOM with another cookie, bad first lines
        return Unreadable(rel, 0, exc.msg if hasattr(exc, "msg") else str(exc))
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return Unreadable(rel, line, f"byte 0x{data[exc.start]:02x} is not {encoding}")
    return None


def _names(text: str | bytes | None) -> list[tuple[str, int]]:
    """(identifier, line) for every name, attribute, import and string constant that names a
    suspicious thing (strings too: ``getattr(sys, "modules")``); none for no text or text that
    does not parse. ``bytes`` are parsed as Python imports them (BOM, coding cookie)."""
    try:
        tree = parse_python(text) if text is not None else None
    except (SyntaxError, ValueError):
        tree = None
    found = []
    for node in ast.walk(tree) if tree is not None else []:
        if isinstance(node, ast.Name):
            found.append((node.id, node.lineno))
        elif isinstance(node, ast.Attribute):
            found.append((node.attr, node.lineno))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.append(node.module)
            found += [(part, node.lineno) for module in modules for part in module.split(".")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [(word, node.lineno) for word in node.value.replace(".", " ").split()]
    return [(name, line) for name, line in found if name in SUSPICIOUS]


# Calls that write an attribute of their first argument (``object.__setattr__(np, ...)`` too).
SETTERS = frozenset({"setattr", "delattr", "__setattr__", "__delattr__"})


def _roots(expr: ast.expr) -> set[str]:
    """The names an expression reaches an object through, without calling it: ``np`` for
    ``np.testing.assert_allclose``, ``np.__dict__["x"]``, ``getattr(np, "x")`` and
    ``vars(np)``; every element's for ``(np, math)``. A call's result is a new object
    (``np.zeros(3)``), so none. Subscripts follow the container, never the index."""
    while True:
        if isinstance(expr, (ast.Attribute, ast.Subscript, ast.Starred)):
            expr = expr.value
        elif (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
              and expr.func.id in ("getattr", "vars") and expr.args):
            expr = expr.args[0]
        else:
            break
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_roots(e) for e in expr.elts))
    if isinstance(expr, ast.IfExp):
        return _roots(expr.body) | _roots(expr.orelse)
    if isinstance(expr, ast.BoolOp):
        return set().union(*(_roots(v) for v in expr.values))
    if isinstance(expr, ast.NamedExpr):
        return _roots(expr.value)
    return set()


def _bindings(tree: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """(target, value) of every binding that can make a name an alias of another:
    assignments, ``for``, ``with ... as``, comprehensions, ``:=``."""
    pairs: list[tuple[ast.expr, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs += [(target, node.value) for target in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            pairs.append((node.target, node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            pairs.append((node.target, node.iter))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            pairs += [(item.optional_vars, item.context_expr) for item in node.items
                      if item.optional_vars is not None]
    return pairs


def _imported_names(tree: ast.AST) -> set[str]:
    """Every name an import binds, and every name bound to one of those as a plain alias
    (``_m = np``, ``for m in (np,)``), to a fixed point."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {alias.asname or alias.name for alias in node.names if alias.name != "*"}
    pairs = _bindings(tree)
    grown = True
    while grown:
        grown = False
        for target, value in pairs:
            if _roots(value) & names:
                new = {t.id for t in _flat_targets(target) if isinstance(t, ast.Name)} - names
                names |= new
                grown = grown or bool(new)
    return names


def _flat_targets(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for e in target.elts for t in _flat_targets(e)]
    return [target.value] if isinstance(target, ast.Starred) else [target]


def _short(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _module_writes(text: str | bytes | None) -> list[tuple[str, int]]:
    """(spelling, line) of every write to an attribute of an imported name or of anything
    reached through one (see the module docstring); none for no text or text that does not
    parse. The spelling is the target (``np.allclose``, ``del np.isclose``,
    ``setattr(np, 'isclose', f)``), so the same write in the original file matches."""
    try:
        tree = parse_python(text) if text is not None else None
    except (SyntaxError, ValueError):
        return []
    if tree is None:
        return []
    imported = _imported_names(tree)
    found: list[tuple[str, int]] = []

    def written(target: ast.expr, prefix: str = "") -> None:
        for t in _flat_targets(target):
            if isinstance(t, (ast.Attribute, ast.Subscript)) and _roots(t) & imported:
                found.append((prefix + _short(t), t.lineno))

    for node in ast.walk(tree):
        if isinstance(node, ast.Delete):
            for target in node.targets:
                written(target, "del ")
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            written(node.target)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            reached = _roots(node.args[0]) if node.args else set()
            if isinstance(func, ast.Attribute) and name in ("__setattr__", "__delattr__"):
                reached |= _roots(func.value)
            if name in SETTERS and reached & imported:
                found.append((_short(node), node.lineno))
            elif name == "vars" and reached & imported:  # the module's namespace itself
                found.append((_short(node), node.lineno))
        elif (isinstance(node, ast.Attribute) and node.attr == "__dict__"
              and _roots(node.value) & imported):
            found.append((_short(node), node.lineno))
    for target, _ in _bindings(tree):
        written(target)
    return found


def scan_file(rel: str, new_text: str | bytes, old_text: str | None) -> list[Finding]:
    """Suspicious names and writes into imported modules in ``new_text`` (the file's bytes, or
    text) that ``old_text`` (the file at start; None for an added file) did not already have,
    each once at its first line."""
    already = {name for name, _ in _names(old_text) + _module_writes(old_text)}
    first: dict[str, int] = {}
    found = _names(new_text) + _module_writes(new_text)
    for name, line in sorted(found, key=lambda item: item[1]):
        if name not in already:
            first.setdefault(name, line)
    return [Finding(rel, line, name) for name, line in first.items()]


def scan_source(rel: str, data: bytes, old_text: str | None) -> list[Finding | Unreadable]:
    """The findings of one changed file's bytes: [Unreadable] when Python's decoding of them
    fails, else :func:`scan_file`'s."""
    problem = unreadable(rel, data)
    return [problem] if problem else scan_file(rel, data, old_text)


def scan_workspace(ws) -> list[Finding | Unreadable]:
    """Findings over every ``.py`` file the learner modified or added in workspace ``ws``
    (a file that cannot be read at all is Unreadable: fail closed)."""
    changes = ws.changes()
    findings: list[Finding | Unreadable] = []
    for rel in sorted(changes["modified"] + changes["added"]):
        if not rel.endswith(".py"):
            continue
        try:
            data = (ws.root / rel).read_bytes()
        except OSError as exc:
            findings.append(Unreadable(rel, 0, exc.strerror or type(exc).__name__))
            continue
        findings += scan_source(rel, data, ws.start_text(rel))
    return findings


def describe(findings: list[Finding | Unreadable], lang: str, diff: str) -> str:
    """The refusal: the files the scan cannot read (and the fix: save them as UTF-8), then
    where the learner's code reaches into the checks, and the ``diff`` command that shows the
    real fix."""
    unread = [f for f in findings if isinstance(f, Unreadable)]
    names = [f for f in findings if isinstance(f, Finding)]
    parts = []
    if unread:
        parts.append(say("break.unreadable", lang, files=", ".join(map(str, unread))))
    if names:
        where = ", ".join(str(f) for f in names[:5]) + (" ..." if len(names) > 5 else "")
        parts.append(say("break.tampered", lang, where=where, diff=diff))
    return " ".join(parts)
