"""Refuse workspace edits that reach into the check machinery instead of fixing the library.

The invariants run in the same process as the learner's copy of minimodel (they must import it
to test it), so code added there could patch the checks in memory, print a verdict or exit 0
early. The runner keeps the harness and invariants out of the workspace and tokens its verdict
lines; this scan closes the rest. Before ``break check``, every Python file the learner changed
or added is parsed, and names a fix of these bugs never needs but a forged verdict does (the
harness and checks; ``sys.modules``, frames, tracing, ``gc``, ``atexit``, ``builtins``, import
hooks, ``exec``/``eval``; exiting, writing to stdout/stderr, signals, subprocesses, ``ctypes``)
are refused unless the original file already used them. A file that no longer parses is left
to the checks (they report the SyntaxError).
"""

from __future__ import annotations

import ast
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


def _names(text: str | None) -> list[tuple[str, int]]:
    """(identifier, line) for every name, attribute, import and string constant that names a
    suspicious thing (strings too: ``getattr(sys, "modules")``); none for no text or text that
    does not parse."""
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


def scan_file(rel: str, new_text: str, old_text: str | None) -> list[Finding]:
    """Suspicious names in ``new_text`` that ``old_text`` (the file at start; None for an added
    file) did not already use, each once at its first line."""
    already = {name for name, _ in _names(old_text)}
    first: dict[str, int] = {}
    for name, line in sorted(_names(new_text), key=lambda item: item[1]):
        if name not in already:
            first.setdefault(name, line)
    return [Finding(rel, line, name) for name, line in first.items()]


def scan_workspace(ws) -> list[Finding]:
    """Findings over every ``.py`` file the learner modified or added in workspace ``ws``."""
    changes = ws.changes()
    findings: list[Finding] = []
    for rel in sorted(changes["modified"] + changes["added"]):
        if not rel.endswith(".py"):
            continue
        try:
            new_text = (ws.root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        findings += scan_file(rel, new_text, ws.start_text(rel))
    return findings


def describe(findings: list[Finding], lang: str, diff: str) -> str:
    """The refusal: where the learner's code reaches into the checks, and the ``diff``
    command that shows the real fix."""
    where = ", ".join(str(f) for f in findings[:5]) + (" ..." if len(findings) > 5 else "")
    return say("break.tampered", lang, where=where, diff=diff)
