"""The modules a judged solution may import at run time: an allow-list, not a list of names.

The static scan refuses the imports it can read (``astscan``: ``import sklearn`` names its
line). A module can also be named while the file runs (``__import__("sk" + "learn")``), so the
judged child refuses, at the import, every top-level module that is not on this list
(``_enforce.AllowList``):

* the standard library (``sys.stdlib_module_names``; the static rule says which of it an
  exercise may use, and why not the rest);
* NumPy, and the exercise's own ``allowed_modules``;
* where the exercise allows torch: torch's distribution and everything it needs to run,
  read from the installed metadata (``importlib.metadata.requires``, recursively; optional
  extras are not followed), each distribution by the top-level modules it installs
  (``torch`` installs ``torch``, ``torchgen`` and ``functorch``; ``sympy`` needs ``mpmath``).
  torch imports some of them lazily (sympy on the first symbolic shape), so a list written by
  hand would go stale with every torch release.

The child adds the modules its harness has already imported before the solution runs.

A module allowed only because torch needs it (sympy, mpmath, networkx, jinja2, fsspec,
filelock ...: :func:`library_only`) is torch's to import, not the solution's: the static scan
refuses ``import sympy``, and at run time the same import asked by the solution's own line
reports ``forbidden`` naming the module, while torch's code (or sympy's own) still loads it.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import sys
from functools import lru_cache

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def required_name(requirement: str) -> str | None:
    """The distribution a requirement line needs, or None for an optional extra's
    (``'sympy>=1.13.3'`` -> ``'sympy'``; ``'optree>=0.13; extra == "optree"'`` -> None).
    Other markers (a platform, a Python version) are not evaluated: a requirement that does
    not apply here is not installed, and then it adds nothing."""
    _, _, marker = requirement.partition(";")
    if "extra" in marker:
        return None
    match = _NAME.match(requirement)
    return match.group(1) if match else None


def top_level_modules(dist: metadata.Distribution) -> set[str]:
    """The top-level importable names a distribution installs (``top_level.txt`` when it has
    one, else the first part of every file of its RECORD that Python could import)."""
    listed = dist.read_text("top_level.txt")
    if listed:
        return {line.strip() for line in listed.splitlines() if line.strip()}
    tops = set()
    for file in dist.files or []:
        first = file.parts[0]
        if first.endswith((".dist-info", ".egg-info", ".data")) or first in ("..", "__pycache__"):
            continue
        if len(file.parts) > 1:
            tops.add(first)
        elif first.endswith((".py", ".so", ".pyd")):
            tops.add(first.split(".")[0])
    return {t for t in tops if t.isidentifier()}


@lru_cache(maxsize=None)
def distribution_closure(name: str) -> frozenset[str]:
    """The top-level modules of distribution ``name`` and of everything it requires,
    recursively (empty when ``name`` is not installed)."""
    seen: set[str] = set()
    modules: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        key = re.sub(r"[-_.]+", "-", current).lower()
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(current)
        except metadata.PackageNotFoundError:
            continue
        modules |= top_level_modules(dist)
        todo += [r for r in map(required_name, dist.requires or []) if r]
    return frozenset(modules)


def runtime_allowed(allow_torch: bool, extra: list[str]) -> list[str]:
    """Every top-level module a solution may import at run time (see the module's doc)."""
    allowed = set(sys.stdlib_module_names) | {"numpy"} | {m.split(".")[0] for m in extra}
    if allow_torch:
        allowed |= {"torch"} | distribution_closure("torch")
    return sorted(allowed)


def library_only(allow_torch: bool, extra: list[str]) -> list[str]:
    """The top-level modules allowed at run time only as torch's dependencies: torch's
    closure (:func:`distribution_closure`) minus the modules torch's own distribution installs
    (``torch``, ``torchgen``, ``functorch``), the standard library, NumPy and the exercise's
    ``extra`` (``sympy``, ``mpmath``, ``networkx``, ``jinja2`` ...; empty without torch)."""
    if not allow_torch:
        return []
    try:
        own = top_level_modules(metadata.distribution("torch"))
    except metadata.PackageNotFoundError:
        return []
    mine = set(sys.stdlib_module_names) | {"numpy"} | {m.split(".")[0] for m in extra}
    return sorted(distribution_closure("torch") - own - mine)
