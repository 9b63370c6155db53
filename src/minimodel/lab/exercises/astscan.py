"""Static scan for forbidden APIs, before a solution is ever run.

The scan resolves import aliases (``import torch.nn.functional as F``, ``from torch import nn``,
``F = torch.nn.functional``) and then looks at every attribute chain, ``getattr(obj, "name")``
with a constant name, and ``__import__`` / ``importlib.import_module`` with a constant string.
A dotted name is forbidden when what it IS equals an entry of the list or lies inside it
(``torch.nn.LayerNorm.forward`` is inside ``torch.nn.LayerNorm``): both are resolved through
the alias table built from the libraries themselves (:mod:`minimodel.lab.exercises.aliases`:
``torch.nn.modules.loss.CrossEntropyLoss`` is ``torch.nn.CrossEntropyLoss``), and a name of
the same family is the same computation (``torch.embedding`` for
``torch.nn.functional.embedding``, ``torch._native_multi_head_attention`` for
``torch.nn.MultiheadAttention``). An entry that starts with a dot (``.requires_grad``) forbids
that attribute or keyword on anything (``w.requires_grad``, ``requires_grad=True``).
The scan reads the code that runs when the judge imports the file: the bodies of
``if __name__ == "__main__":`` and ``if TYPE_CHECKING:`` are skipped (the run-time rule still
applies to everything).

Imports of top-level modules outside the allowed list are reported too (``import os``): the
libraries of the exercise and the standard library's modules for computing and diagnostics
are allowed, modules that reach outside the function are not (``DEFAULT_ALLOWED_MODULES``).

This is a teaching rule, exact and cheap, with a clear line number: it stops a learner from
calling by accident the very thing the exercise asks them to write. Names built at run time
(``getattr(F, "ge" + "lu")``, ``from torch.nn.functional import *``) are the run-time half's:
the judged child replaces the forbidden callables before the solution runs
(:func:`runtime_entries`, ``_enforce.py``). Deliberate evasion on one's own machine is out of
scope (``docs/judge.md`` says why). In a NumPy-only exercise the sandbox hides torch
altogether.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass

from minimodel.lab.exercises.aliases import canonical, same_family
from minimodel.lab.exercises.concepts import ATTENTION, BY_IDENTITY_ONLY, NORMALISATION
from minimodel.lab.exercises.family import (FUSED_ACTIVATION, module_in_family,
                                            named_by_family_word)
from minimodel.lab.pyparse import is_main_test, parse_python

# Forbidden in every exercise: the library calls that would do the learner's work (the whole
# attention and normalisation families, :mod:`.concepts`), and minimodel itself (it ships the
# reference solutions).
DEFAULT_FORBIDDEN = ["minimodel", *ATTENTION, *NORMALISATION]
# torch's compiler stacks: the graph capture, the compilers and their pattern libraries
# (``torch._inductor.fx_passes.fuse_attention._sfdp_pattern_1`` is a scaled dot-product
# attention in plain ops), and the ONNX exporter (``torch.onnx.ops.attention`` is ONNX
# Attention's reference, a whole attention in plain ops). No exercise's answer calls them; importing them from the solution is
# refused at run time too (``_enforce.COMPILER_STACKS``, the same list).
COMPILER_STACKS = ["torch.fx", "torch._dynamo", "torch._inductor", "torch._functorch",
                   "torch._higher_order_ops", "torch._export", "torch.onnx"]
# The ways around any fence: internals, operator registries, Python re-implementations of
# torch's ops, compilers, loaders. Not computations: the family rule does not apply to them at
# run time (``_enforce.py`` replaces ``torch.load`` itself, not every private ``_load``).
FENCE_FORBIDDEN = [
    "torch._C", "torch.ops", "torch._ops", "torch.library", "torch.overrides", "torch.utils",
    "torch.jit", *COMPILER_STACKS, "torch.compile", "torch.package", "torch.hub",
    "torch.load", "torch.multiprocessing", "torch.distributed", "torch._VF",
    "torch._refs", "torch._prims", "torch._decomp",
    "numpy.load", "numpy.ctypeslib", "numpy.testing", "numpy.f2py", "numpy.distutils",
]
DEFAULT_FORBIDDEN += FENCE_FORBIDDEN
# Forbidden by rule where the statement says "without autograd".
# A method called ``backward`` is not forbidden by name: the learner's own layers may have one
# (hand-written backprop is the exercise); torch's ``Tensor.backward`` is refused at the call.
# ATEN_BACKWARD stands for every ATen gradient kernel (an op whose name holds the word
# ``backward``), read from torch's op registry: the alias table for the scan, torch itself in
# the child.
ATEN_BACKWARD = "torch.ops.aten.*_backward"
# ``requires_grad`` is not a rule by name: an object of the learner's own may have such an
# attribute; torch's is harmless while grad mode is off (the child turns it off), and
# ``Tensor.requires_grad_`` is refused at the call.
AUTOGRAD_FORBIDDEN = ["torch.autograd", "torch.func", ATEN_BACKWARD]
# ... and replaced at run time (modules cannot be: torch itself uses them): the calls that
# compute a gradient, reverse mode (backward, grad), forward mode (forward_ad's dual numbers)
# and by finite differences (gradcheck's numerical Jacobian).
AUTOGRAD_CALLABLES = ["torch.Tensor.backward", "torch.Tensor.requires_grad_",
                      "torch.autograd.backward", "torch.autograd.grad",
                      *(f"torch.autograd.forward_ad.{f}" for f in (
                          "make_dual", "unpack_dual", "dual_level", "enter_dual_level",
                          "exit_dual_level")),
                      *(f"torch.autograd.gradcheck.{f}" for f in (
                          "gradcheck", "gradgradcheck", "get_numerical_jacobian",
                          "get_analytical_jacobian")),
                      *(f"torch.autograd.functional.{f}" for f in ("jacobian", "hessian", "vjp",
                                                                  "jvp", "hvp", "vhp")),
                      *(f"torch.func.{f}" for f in ("grad", "grad_and_value", "vjp", "jvp",
                                                     "jacrev", "jacfwd", "hessian",
                                                     "linearize"))]
# The compilers that run source or graphs torch builds itself: their code calls the ATen
# operators from torch's registry, past the stubs (``torch.jit.CompilationUnit(src)`` running
# ``torch.ops.aten.cross_entropy_loss``), so they are refused at the call in every exercise
# that forbids an API (a class, ``GraphModule``, when it is built).
TORCH_COMPILERS = [*(f"torch.jit.{f}" for f in ("script", "trace", "trace_module",
                                                "CompilationUnit", "_fork", "load")),
                   "torch.compile", "torch.fx.symbolic_trace", "torch.fx.GraphModule",
                   "torch.export.export"]
# What a solution may import (top-level names); the exercise may add to it. The rule: the
# libraries of the exercise, and the standard library's modules for computing and for
# diagnostics. Every other module is refused, by name: those that reach outside the function
# (files: os, pathlib, io, shutil, glob, tempfile, linecache, traceback; processes and signals:
# subprocess, multiprocessing, signal; the network: socket, urllib, http; other code by name or
# the interpreter's internals: importlib, pkgutil, runpy, inspect, builtins, gc, ctypes, types,
# pickle, marshal), which no exercise needs. It is a teaching rule: the sandbox is the fence.
DEFAULT_ALLOWED_MODULES = [
    "numpy", "torch", "__future__",
    # numbers
    "math", "cmath", "numbers", "fractions", "decimal", "statistics", "random",
    # data structures and functional tools
    "collections", "heapq", "bisect", "array", "itertools", "functools", "operator", "copy",
    "contextlib", "dataclasses", "enum", "abc", "typing", "string", "textwrap", "re",
    # diagnostics: messages to stderr, timing
    "sys", "warnings", "logging", "pprint", "reprlib", "time",
    # threads: threading, and concurrent.futures' thread pools (its ProcessPoolExecutor is
    # refused when it is built, with every other way to start a process: _enforce)
    "threading", "concurrent",
]


@dataclass(frozen=True)
class Finding:
    """One forbidden use: the dotted name, the line, and how it was reached."""

    name: str
    line: int
    how: str  # "import", "attribute", "name", "getattr", "dynamic import"

    def as_dict(self) -> dict:
        return asdict(self)


class _Rule:
    """The forbidden list, resolved: entries, their canonical names, attribute rules."""

    def __init__(self, forbidden: list[str], aliases: dict | None) -> None:
        self.paths = (aliases or {}).get("paths", {})
        modules = self.modules = set((aliases or {}).get("modules", []))
        self.attributes = {f[1:] for f in forbidden if f.startswith(".")}
        self.backward_ops = (set((aliases or {}).get("aten_backward", []))
                             if ATEN_BACKWARD in forbidden else set())
        # the gelu family's ops that take their activation as an argument, by their last name
        # (torch._addmm_activation): the alias table read them from torch's op schemas
        self.activation_ops = ({q.split("::", 1)[1] for q in
                                (aliases or {}).get("fused_activation", {})}
                               if FUSED_ACTIVATION in forbidden else set())
        self.entries = [(bad, canonical(bad, self.paths)) for bad in forbidden
                        if not bad.startswith(".") and bad not in (ATEN_BACKWARD,
                                                                   FUSED_ACTIVATION)]
        # the family rule is for functions and classes, not for whole modules, nor for a
        # private helper refused by identity only (concepts.BY_IDENTITY_ONLY)
        self.family = [bad for bad, canon in self.entries
                       if "." in bad and canon not in modules and bad not in modules
                       and bad not in BY_IDENTITY_ONLY]

    def match(self, dotted: str, module: bool = False) -> str | None:
        """The entry ``dotted`` is or lies inside, else None; a ``module`` (a name an
        ``import`` statement names) is never judged by the family rule, which is for
        functions and classes: ``import torch.nn.attention.flex_attention`` imports, only
        calling its ``flex_attention`` is refused."""
        names = {dotted, canonical(dotted, self.paths)}
        for bad, canon in self.entries:
            if any(n == b or n.startswith(b + ".") for n in names for b in (bad, canon)):
                return bad
        parts = dotted.split(".")
        if parts[0] == "torch" and parts[-1] in self.backward_ops:
            return f"torch.ops.aten.{parts[-1]}"
        if parts[0] == "torch" and parts[-1] in self.activation_ops:
            return FUSED_ACTIVATION
        if module or dotted in self.modules:
            return None
        for bad in self.family:
            top, last = bad.split(".")[0], bad.split(".")[-1]
            if parts[0] == top and any(same_family(p, last) for p in parts[1:]):
                return bad
            # a callable named exactly by the family's word (torch.onnx.ops.attention); the
            # module torch.nn.attention is not one (modules returned above)
            if parts[0] == top and named_by_family_word(parts[-1], last):
                return bad
        # a name defined in a module whose name holds a family's word (what
        # torch._inductor.fx_passes.fuse_attention defines is attention): family.module_in_family,
        # on what the name IS (torch.Tensor imported into torch.nn.modules.batchnorm is not)
        where = canonical(dotted, self.paths).split(".")
        for bad in self.family:
            top, last = bad.split(".")[0], bad.split(".")[-1]
            if where[0] == top and any(module_in_family(p, last) for p in where[1:-1]):
                return bad
        return None


class _Scanner(ast.NodeVisitor):
    def __init__(self, forbidden: list[str], allowed: list[str] | None,
                 aliases: dict | None = None) -> None:
        self.rule, self.allowed = _Rule(forbidden, aliases), allowed
        self.aliases: dict[str, str] = {}
        self.findings: list[Finding] = []

    def _flag(self, dotted: str | None, node: ast.AST, how: str, module: bool = False) -> None:
        bad = self.rule.match(dotted, module) if dotted else None
        top = dotted.split(".")[0] if dotted else ""
        if how in ("import", "dynamic import") and self.allowed is not None and top \
                and top not in self.allowed:
            self.findings.append(Finding(top, getattr(node, "lineno", 0), how))
        elif bad:
            self.findings.append(Finding(dotted, getattr(node, "lineno", 0), how))

    def _flag_name(self, name: str | None, node: ast.AST, how: str) -> None:
        if name in self.rule.attributes:
            self.findings.append(Finding("." + name, getattr(node, "lineno", 0), how))

    def visit_If(self, node: ast.If) -> None:
        """The judge imports the file: the body of ``if __name__ == "__main__":`` (a
        self-test) and of ``if TYPE_CHECKING:`` (imports for type hints) never runs when it is
        judged, so the scan reads only their ``else``. The run-time rule still covers them."""
        self.visit(node.test)
        if not (never_runs_on_import(node.test)
                or self.resolve(node.test) == "typing.TYPE_CHECKING"):  # under another name
            for child in node.body:
                self.visit(child)
        for child in node.orelse:
            self.visit(child)

    def visit_keyword(self, node: ast.keyword) -> None:
        self._flag_name(node.arg, node, "keyword")
        self.generic_visit(node)

    def resolve(self, node: ast.AST) -> str | None:
        """``F.gelu`` -> ``torch.nn.functional.gelu`` when F is a known alias."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and _is_getattr(node):
            base = self.resolve(node.args[0])
            name = node.args[1].value
            return f"{base}.{name}" if base else None
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._flag(alias.name, node, "import", module=True)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.aliases[top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        self._flag(node.module, node, "import", module=True)
        for alias in node.names:
            full = f"{node.module}.{alias.name}"
            self._flag(full, node, "import")
            self.aliases[alias.asname or alias.name] = full

    def visit_Assign(self, node: ast.Assign) -> None:
        target = self.resolve(node.value)
        if target:  # F = torch.nn.functional  -> F is an alias from here on
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.aliases[t.id] = target
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._flag(self.resolve(node), node, "attribute")
        self._flag_name(node.attr, node, "attribute")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if _is_getattr(node):
            self._flag(self.resolve(node), node, "getattr")
        func = node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else "")
        if name in ("__import__", "import_module") and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            self._flag(node.args[0].value, node, "dynamic import")
        self.generic_visit(node)


def never_runs_on_import(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either order, or ``__name__ in ("__main__",)``),
    ``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``: a condition that is false when the judge
    imports the file (``TYPE_CHECKING`` imported under another name: the scanner resolves it)."""
    if isinstance(test, ast.Name) or isinstance(test, ast.Attribute):
        name = test.id if isinstance(test, ast.Name) else test.attr
        return name == "TYPE_CHECKING"
    return is_main_test(test)


def _is_getattr(node: ast.Call) -> bool:
    return (isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str))


def runtime_entries(forbidden: list[str], aliases: dict | None) -> list[dict]:
    """The forbidden list as the judged child replaces it (``_enforce.py``): for every entry
    with a library path, ``{"api", "paths", "family"}``: the paths the alias table knows for
    the same object (the child resolves them by identity) and, for a function or a class, its
    last name (the family rule; not for the fence entries, see ``FENCE_FORBIDDEN``).
    Attribute rules (``.requires_grad``) and whole packages stay static; the gelu family's
    ops that take their activation as an argument (``family.FUSED_ACTIVATION``) are one entry
    without paths, which the child fills from torch's op schemas."""
    rule = _Rule(forbidden, aliases)
    by_canonical: dict[str, list[str]] = {}
    for path, canon in rule.paths.items():
        by_canonical.setdefault(canon, []).append(path)
    entries = [{"api": bad, "paths": sorted({bad, canon, *by_canonical.get(canon, [])}),
                "family": bad.split(".")[-1] if bad in rule.family and bad not in FENCE_FORBIDDEN
                else None}
               for bad, canon in rule.entries if "." in bad]
    if FUSED_ACTIVATION in forbidden:  # the child reads these ops from torch's own schemas
        entries.append({"api": FUSED_ACTIVATION, "paths": [], "family": None})
    return entries


def scan_source(source: str, forbidden: list[str],
                allowed_modules: list[str] | None = None,
                aliases: dict | None = None) -> list[Finding]:
    """Forbidden uses in ``source``, in line order, each name reported once per line; with
    ``allowed_modules``, imports of any other top-level module as well; with ``aliases``
    (:func:`minimodel.lab.exercises.aliases.table`), names resolved to what they are.

    A file that does not parse yields no findings: running it reports the SyntaxError, which
    is more useful to the learner than a refusal.
    """
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return []
    scanner = _Scanner(forbidden, allowed_modules, aliases)
    scanner.visit(tree)
    seen, unique = set(), []
    for f in sorted(scanner.findings, key=lambda f: (f.line, f.name)):
        key = (f.name, f.line)
        nested = any(line == f.line and (name.startswith(f.name + ".")
                                         or f.name.startswith(name + "."))
                     for name, line in seen)
        if key not in seen and not nested:
            seen.add(key)
            unique.append(f)
    return unique
