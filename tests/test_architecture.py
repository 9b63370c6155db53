"""The layering of docs/architecture.md, checked: imports only point down, no module is part
of an import cycle (a cycle means two files that cannot be read, or changed, one at a time),
and command-line parsing happens only in the command layer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp")

ROOT = Path(__file__).resolve().parent.parent


def test_layers_contract_is_kept():
    """`lint-imports` (import-linter) with the contract in pyproject.toml."""
    pytest.importorskip("importlinter")
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and "1 kept, 0 broken" in proc.stdout, \
        proc.stdout[-3000:] + proc.stderr[-2000:]


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    class Toy:
        modules = {"a", "b", "c", "d"}

        @staticmethod
        def find_modules_directly_imported_by(m):
            return {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}[m]

    assert _cycles(Toy) == [["a", "b", "c"]]


def test_no_import_cycles():
    graph = grimp.build_graph("minimodel", exclude_type_checking_imports=True, cache_dir=None)
    # A package's __init__ re-exporting its children is not a cycle a reader trips over.
    for module in list(graph.modules):
        for child in graph.find_children(module):
            if graph.direct_import_exists(importer=module, imported=child):
                graph.remove_import(importer=module, imported=child)
    assert _cycles(graph) == []


def test_argument_parsing_only_in_the_commands():
    graph = grimp.build_graph("minimodel", include_external_packages=True, cache_dir=None)
    parsers = sorted(m for m in graph.find_modules_that_directly_import("argparse")
                     if m.startswith("minimodel"))
    assert parsers and all(m.startswith(("minimodel.cli", "minimodel.commands"))
                           for m in parsers), parsers
