"""Is a checked file a copy of one of the lab's own solutions? Recognised function by function,
by content, not path.

A pass is the learner's when they wrote the function. The lab ships a reference solution for
every exercise (and alternatives, different correct solutions), and one reference file may hold
the answers of several exercises (the MLM reference holds a layer norm, a GELU and an
attention). Every function of a checked file is compared with every function of every
exercise's reference and alternatives, whichever exercise is checked: a function lifted from
any of them (moved to another file, renamed, its helpers deleted, reached through an alias such
as ``gelu = gelu_tanh``) makes the file a copy.

Two functions are the same when their *normalised trees* are the same: the syntax tree without
comments, docstrings, layout, quote style or type annotations, with the function's own name and
its argument names ignored (they are replaced by their positions). The other names and the
statements stay: the reference's algorithm typed again in one's own way (other local names,
another order, a loop for a comprehension) is a different tree, and the learner's own work.

Both trees (this one and the one up to renaming, below) also drop what cannot change
behaviour, so a paste padded with it is the same tree: ``pass``, a bare constant as a
statement (a string, a number, ``...``), and every statement after a ``return``, ``raise``,
``break`` or ``continue`` of the same block (never reached). That is the limit of the
comparison: a statement that runs is another tree, even when its result is never used (an
unused assignment ``t = 0``, an ``if True:`` wrapper, a call whose value is dropped). Telling
those apart from the learner's own edits is not attempted.

The same tree is a copy when it carries a choice of the solution's author that the statement
does not dictate:

* a docstring of the solution's, word for word (whitespace aside), in the checked file: the
  function's own, a nested function's, or its file's module docstring (the file pasted whole).
  It is the mark of the lab's text pasted, which an honest learner never types (a starter
  file has docstrings of its own, never the solution's); or
* a name of the author's: a name of two characters or more that the function assigns, or reads
  from its module (``_GELU_C``, ``LN_EPS``), and that neither the English nor the Spanish
  statement of the exercise checked or of the exercises the solution belongs to writes (``lse``
  and ``keep`` in cross-entropy, ``p_next`` in the bigram loss, ``ctx`` and ``merged`` in the
  MLM reference's attention). An honest function that repeats the whole tree *and* such names
  is not to be expected, so a paste with its docstrings stripped is still a copy.

Where every name of a function is given by the statement or is a single letter
(``return h @ E.T``; the one-hot lookup's ``V = E.shape[0]``, ``onehot = ...``,
``return onehot @ E``; layer norm's ``mean``, ``var``, ``y``; gelu's ``c = math.sqrt(2 /
math.pi)``), an honest learner types the lab's tree to the letter: that tree decides nothing,
and the function is the learner's unless it carries the solution's docstring.

Once a solution has been shown, what was shown is compared more loosely. A function of the
checked file that equals a function of a reference the learner has viewed *up to a consistent
renaming* (alpha-equivalence: its local names, nested functions, lambda arguments, the module
constants it reads and the helpers it calls may all carry other names, one new name for each
old one; what it imports is compared by module, ``np`` as ``numpy``) is a copy of what was
shown, with or without the author's names or docstrings: the learner has read that text, and
"after viewing the solution" is the truthful label, for a one-liner (``return h @ E.T``) too.
Attributes, keyword names, constants and the statements stay: a helper inlined, a loop for a
comprehension, another order is another tree and stays the learner's own. A learner who has
viewed nothing, or not the solution holding that function, keeps the rule above.

What a copy records (:func:`minimodel.lab.exercises.judge.check_solution`): a copy of a
function the learner has been shown (it is in the reference file that ``exercise solution``
printed for some exercise) is a pass *after viewing the solution*; a copy of anything else
(an alternative, a reference never shown, the file found in the package) is practice, never a
recorded pass.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from minimodel.lab import integrity
from minimodel.lab.exercises.registry import Exercise, all_exercises
from minimodel.lab.pyparse import parse_python

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class LabFunction:
    """One function of the lab's solution files, as the copy rule sees it."""

    docstrings: frozenset[str]      # its own, its nested functions' and its module's
    names: frozenset[str]           # names of two letters or more it assigns or reads
    statement_ids: frozenset[str]   # the exercises whose solution files hold it
    shown_by: frozenset[str]        # the exercises whose shown solution (reference) holds it


@dataclass(frozen=True)
class Copied:
    """A function of a checked file that is one of the lab's."""

    function: str                   # its name in the checked file
    shown_by: frozenset[str]        # exercises whose ``exercise solution`` shows it


def _docstrings(tree: ast.AST) -> frozenset[str]:
    """The module's, classes' and functions' docstrings, each with its whitespace collapsed."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, *_FUNCTIONS)):
            doc = ast.get_docstring(node, clean=False)
            if doc and doc.strip():
                found.add(" ".join(doc.split()))
    return frozenset(found)


def _is_inert(node: ast.stmt) -> bool:
    """A statement that does nothing: ``pass``, or a bare constant (a docstring, a number,
    ``...``)."""
    return isinstance(node, ast.Pass) or (isinstance(node, ast.Expr)
                                          and isinstance(node.value, ast.Constant))


_JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def _live(body: list[ast.stmt]) -> list[ast.stmt]:
    """A block without what cannot change behaviour: inert statements, and whatever follows a
    ``return``/``raise``/``break``/``continue`` of the same block (never reached). An empty
    block is ``pass``."""
    kept: list[ast.stmt] = []
    for statement in body:
        if not _is_inert(statement):
            kept.append(statement)
        if isinstance(statement, _JUMPS):
            break
    return kept or [ast.Pass()]


def _without_dead_code(node: ast.AST) -> None:
    """Replace every statement block of ``node`` itself by its live statements (:func:`_live`)."""
    for field in ("body", "orelse", "finalbody"):
        body = getattr(node, field, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            setattr(node, field, _live(body))


def without_dead_code(tree: ast.Module) -> ast.Module:
    """The module with every block live (:func:`_live`), docstrings gone too: what the file
    defines, assigns and imports is read from this, so a name used only in dead code (a
    ``def np(): ...`` after a ``return``) changes nothing."""
    for node in list(ast.walk(tree)):
        _without_dead_code(node)
    return tree


class _Normalise(ast.NodeTransformer):
    """Drops dead code (:func:`_live`) and annotations; names the arguments by their position and
    every function of the file (or alias of one) ``_fn``."""

    def __init__(self, arguments: dict[str, str], functions: frozenset[str]) -> None:
        self.arguments = arguments
        self.functions = functions

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        _without_dead_code(node)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        return ast.arg(arg=self.arguments.get(node.arg, node.arg), annotation=None)

    def visit_Name(self, node: ast.Name) -> ast.Name:
        name = "_fn" if node.id in self.functions else node.id
        return ast.Name(id=self.arguments.get(node.id, name), ctx=node.ctx)


def _arguments(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    every = a.posonlyargs + a.args + [a.vararg] + a.kwonlyargs + [a.kwarg]
    return [arg.arg for arg in every if arg is not None]


def function_key(fn: ast.FunctionDef | ast.AsyncFunctionDef, functions: frozenset[str]) -> str:
    """The function's normalised tree as text: its own name and argument names ignored, and
    the names of the file's ``functions`` (a helper renamed is the same call)."""
    fn = copy.deepcopy(fn)
    fn.returns = None
    for node in ast.walk(fn):
        if isinstance(node, _FUNCTIONS):
            node.name = "_fn"
    renamed = {name: f"_arg{i}" for i, name in enumerate(_arguments(fn))}
    return ast.dump(_Normalise(renamed, functions).visit(fn), annotate_fields=False,
                    include_attributes=False)


def imported_names(tree: ast.AST) -> dict[str, str]:
    """What each imported name of a file stands for: ``np`` -> ``numpy`` (``import numpy as
    np``), ``sqrt`` -> ``math.sqrt`` (``from math import sqrt``)."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = \
                    alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _qualified(dotted: str, ctx: ast.expr_context) -> ast.expr:
    """``math.sqrt`` as the expression ``math.sqrt``."""
    first, *rest = dotted.split(".")
    node: ast.expr = ast.Name(id=first, ctx=ast.Load())
    for attr in rest:
        node = ast.Attribute(value=node, attr=attr, ctx=ast.Load())
    node.ctx = ctx
    return node


class _Canonical(ast.NodeTransformer):
    """Renames, in the order they are first met, every name a function binds (locals, nested
    functions, their arguments) and every name of its module it reads (constants, helpers):
    ``_v0``, ``_v1``, ... Its own name is ``_fn``, its arguments ``_arg0``, ... by position,
    an imported name the module it stands for. Dead code (:func:`_live`) and annotations are
    dropped."""

    def __init__(self, top: ast.AST, renameable: set[str], imported: dict[str, str]) -> None:
        self.top = top
        self.names = {name: f"_arg{i}" for i, name in enumerate(_arguments(top))}
        self.renameable = renameable
        self.imported = imported

    def _name(self, name: str) -> str:
        if name not in self.names and name in self.renameable:
            self.names[name] = f"_v{len(self.names)}"
        return self.names.get(name, name)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, _FUNCTIONS):
            node.name = "_fn" if node is self.top else self._name(node.name)
            node.returns = None
        elif isinstance(node, ast.ExceptHandler) and node.name:
            node.name = self._name(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [self._name(n) for n in node.names]
        elif isinstance(node, ast.alias):
            node.asname = None
        _without_dead_code(node)   # before its names are numbered: dead code numbers none
        return super().generic_visit(node)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        return ast.arg(arg=self._name(node.arg), annotation=None)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.renameable or node.id in self.names:
            return ast.Name(id=self._name(node.id), ctx=node.ctx)
        if node.id in self.imported:
            return _qualified(self.imported[node.id], node.ctx)
        return node


def renaming_key(fn: ast.FunctionDef | ast.AsyncFunctionDef, module_names: set[str],
                 imported: dict[str, str]) -> str:
    """The function's tree up to a consistent renaming (see the module): two functions have
    the same key when one is the other with its names changed, one new name for each old."""
    fn = copy.deepcopy(fn)
    bound = {node.id for node in ast.walk(fn)
             if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound |= {node.arg for node in ast.walk(fn) if isinstance(node, ast.arg)}
    bound |= {node.name for node in ast.walk(fn) if isinstance(node, _FUNCTIONS)}
    renameable = bound | (module_names - set(imported))
    return ast.dump(_Canonical(fn, renameable, imported).visit(fn), annotate_fields=False,
                    include_attributes=False)


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, _FUNCTIONS)]


def function_names(tree: ast.Module) -> frozenset[str]:
    """The names of a file's functions (nested ones too) and of its aliases of them
    (``gelu = gelu_tanh`` at the top level: ``gelu`` resolves to ``gelu_tanh``)."""
    names = {fn.name for fn in _functions(tree)}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) \
                and node.value.id in names:
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return frozenset(names)


def _author_names(fn: ast.AST, module_names: set[str], functions: frozenset[str]) -> set[str]:
    """Names of two letters or more ``fn`` assigns, or reads from its module's own names,
    other than its arguments and the file's functions (their names are not compared)."""
    own = set(_arguments(fn)) | functions
    found = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and (isinstance(node.ctx, ast.Store)
                                           or node.id in module_names):
            found.add(node.id)
    return {n for n in found - own if len(n) > 1 and n != "FRAMEWORK"}


def _module_names(tree: ast.Module) -> set[str]:
    """The names a module assigns, anywhere in it."""
    return {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def _statement_words(ex: Exercise) -> frozenset[str]:
    text = " ".join(ex.text("statement", lang) for lang in ("en", "es"))
    return frozenset(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text))


def lab_solution_files(ex: Exercise) -> list[str]:
    """The reference of ``ex`` (its module, for a library reference) and its alternatives."""
    return [str(ex.reference_path)] + [str(ex.folder / "alternatives" / name)
                                       for name in ex.alternatives]


@functools.lru_cache(maxsize=1)
def _lab_functions() -> dict[str, LabFunction]:
    """Every function of every exercise's solution files (read as the manifest vouches for
    them), by normalised tree."""
    found: dict[str, LabFunction] = {}
    for ex in all_exercises():
        reference = str(ex.reference_path)
        for name in lab_solution_files(ex):
            tree = parse_python(integrity.verified_bytes(Path(name)).decode("utf-8-sig"))
            module_names, functions = _module_names(tree), function_names(tree)
            doc = ast.get_docstring(tree, clean=False) or ""
            module_doc = {" ".join(doc.split())} if doc.strip() else set()
            for fn in _functions(tree):
                key = function_key(fn, functions)
                before = found.get(key, LabFunction(frozenset(), frozenset(), frozenset(),
                                                    frozenset()))
                found[key] = LabFunction(
                    before.docstrings | _docstrings(fn) | module_doc,
                    before.names | _author_names(fn, module_names, functions),
                    before.statement_ids | {ex.id},
                    before.shown_by | ({ex.id} if name == reference else set()))
    return found


@functools.lru_cache(maxsize=1)
def _shown_functions() -> dict[str, frozenset[str]]:
    """Every function of every exercise's reference (what ``exercise solution`` shows), by
    its key up to renaming, with the exercises whose shown solution holds it."""
    found: dict[str, frozenset[str]] = {}
    for ex in all_exercises():
        tree = without_dead_code(parse_python(
            integrity.verified_bytes(ex.reference_path).decode("utf-8-sig")))
        module_names = _module_names(tree) | function_names(tree)
        imported = imported_names(tree)
        for fn in _functions(tree):
            key = renaming_key(fn, module_names, imported)
            found[key] = found.get(key, frozenset()) | {ex.id}
    return found


@functools.lru_cache(maxsize=64)
def _given(exercise_ids: frozenset[str]) -> frozenset[str]:
    """The names the statements of these exercises write, in every language."""
    words: set[str] = set()
    for ex in all_exercises():
        if ex.id in exercise_ids:
            words |= _statement_words(ex)
    return frozenset(words)


def lab_copies(ex: Exercise, source: str, viewed: Collection[str] = ()) -> list[Copied]:
    """The functions of ``source`` that are one of the lab's solution functions: the same
    normalised tree, with a name of the author's the statements do not give or one of that
    function's own docstrings; or, when the learner has viewed solutions (``viewed``: those
    exercises' ids), a function of one of them up to a consistent renaming. Empty for the
    learner's own work (or a file that does not parse)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return []
    lab = _lab_functions()
    shown = _shown_functions() if viewed else {}
    docstrings = _docstrings(tree)          # read before the dead code (docstrings) goes
    tree = without_dead_code(tree)
    functions = function_names(tree)
    module_names, imported = _module_names(tree) | functions, imported_names(tree)
    copied = []
    for fn in _functions(tree):
        solution = lab.get(function_key(fn, functions))
        if solution is not None:
            authors = solution.names - _given(solution.statement_ids | {ex.id})
            if authors or solution.docstrings & docstrings:
                copied.append(Copied(fn.name, solution.shown_by))
                continue
        seen_in = shown.get(renaming_key(fn, module_names, imported), frozenset()) \
            if shown else frozenset()
        if seen_in & set(viewed):   # read in a solution shown, then typed with new names
            copied.append(Copied(fn.name, seen_in))
    return copied


def is_lab_copy(ex: Exercise, source: str, viewed: Collection[str] = ()) -> bool:
    """Does ``source`` hold a function of one of the lab's solutions (see the module)?"""
    return bool(lab_copies(ex, source, viewed))


def all_shown(copied: list[Copied], viewed: Collection[str]) -> bool:
    """Has the learner been shown every copied function (``viewed``: the exercises whose
    solution they viewed)? Then the file's pass is a pass after viewing the solution."""
    return bool(copied) and all(c.shown_by & set(viewed) for c in copied)
