"""Layering checks on the import graph (grimp, from import-linter): no import cycles, and
command-line parsing only in the command layer."""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")

# Cycles inside the engine that its rewrite (issue 10, section 1) removes; none may be added.
ENGINE_CYCLES = [{"minimodel.autograd", "minimodel.ops", "minimodel.tensor"},
                 {"minimodel.nn.layers", "minimodel.nn.module"}]
# Where argparse may be imported: the `minimodel` command and its subcommands.
PARSING_MODULES = ("minimodel.cli", "minimodel.commands")


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("minimodel", include_external_packages=True, cache_dir=None)


def import_cycles(graph) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    modules = sorted(m for m in graph.modules if m.startswith("minimodel"))
    edges = {m: sorted(n for n in graph.find_modules_directly_imported_by(m)
                       if n.startswith("minimodel")) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_the_cycle_finder_finds_a_cycle():
    class Toy:
        modules = {"minimodel.a", "minimodel.b", "minimodel.c", "minimodel.d"}

        @staticmethod
        def find_modules_directly_imported_by(m):
            return {"minimodel.a": {"minimodel.b"}, "minimodel.b": {"minimodel.c"},
                    "minimodel.c": {"minimodel.a"}, "minimodel.d": {"minimodel.a"}}[m]

    assert import_cycles(Toy) == [{"minimodel.a", "minimodel.b", "minimodel.c"}]


def test_no_import_cycles_outside_the_engine(graph):
    unexpected = [sorted(c) for c in import_cycles(graph)
                  if not any(c <= known for known in ENGINE_CYCLES)]
    assert unexpected == []


def test_argument_parsing_only_in_the_commands(graph):
    parsers = sorted(m for m in graph.find_modules_that_directly_import("argparse")
                     if m.startswith("minimodel"))
    assert parsers and all(m.startswith(PARSING_MODULES) for m in parsers), parsers
