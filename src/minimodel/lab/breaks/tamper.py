"""Refuse workspace edits that reach into the check machinery instead of fixing the library.

The invariants run in the same Python process as the learner's copy of minimodel (they must
import it to test it), so code added to that copy could in principle patch the checks in
memory, print a verdict, or end the process early with exit code 0. The runner already keeps
the harness and the invariants out of the workspace and marks verdict lines with a one-time
token; this scan closes the rest: before ``break check`` runs, every Python file the learner
changed or added is parsed, and names that a fix of these bugs never needs — but a forged
verdict does — are refused if the original file did not already use them:

* the harness and the checks: ``minimodel_break_harness``, ``invariants``, ``Checks``...;
* the interpreter's machinery: ``sys.modules``, frames and tracing, ``gc``, ``atexit``,
  ``builtins``, import hooks, ``exec``/``eval``/``compile``;
* the process: exiting (``sys.exit``, ``os._exit``), writing to stdout/stderr directly,
  signals, subprocesses, ``ctypes``.

A file that no longer parses is left to the checks (they report the SyntaxError).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

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


def _names(tree: ast.AST) -> list[tuple[str, int]]:
    """(identifier, line) for every name, attribute, import and string constant that names a
    suspicious thing (strings too: ``getattr(sys, "modules")``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append((node.id, node.lineno))
        elif isinstance(node, ast.Attribute):
            found.append((node.attr, node.lineno))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.append(node.module)
            for module in modules:
                for part in module.split("."):
                    found.append((part, node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for word in node.value.replace(".", " ").split():
                if word.isidentifier():
                    found.append((word, node.lineno))
    return [(name, line) for name, line in found if name in SUSPICIOUS]


def _parse(text: str) -> ast.AST | None:
    try:
        return parse_python(text)
    except (SyntaxError, ValueError):
        return None


def scan_file(rel: str, new_text: str, old_text: str | None) -> list[Finding]:
    """Suspicious names in ``new_text`` that ``old_text`` (the file at start; None for an added
    file) did not already use."""
    new_tree = _parse(new_text)
    if new_tree is None:
        return []
    old_tree = _parse(old_text) if old_text is not None else None
    already = {name for name, _ in _names(old_tree)} if old_tree is not None else set()
    seen: set[str] = set()
    findings = []
    for name, line in sorted(_names(new_tree), key=lambda item: item[1]):
        if name not in already and name not in seen:
            seen.add(name)
            findings.append(Finding(rel, line, name))
    return findings


def scan_workspace(ws) -> list[Finding]:
    """Findings over every ``.py`` file the learner modified or added in workspace ``ws``."""
    changes = ws.changes()
    findings: list[Finding] = []
    for rel in sorted(changes.get("modified", []) + changes.get("added", [])):
        if not rel.endswith(".py"):
            continue
        try:
            new_text = (ws.root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        findings += scan_file(rel, new_text, ws.start_text(rel))
    return findings


def describe(findings: list[Finding], lang: str) -> str:
    where = ", ".join(str(f) for f in findings[:5]) + (" ..." if len(findings) > 5 else "")
    return say("break.tampered", lang, where=where)
