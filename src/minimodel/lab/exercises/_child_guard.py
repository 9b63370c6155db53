"""The attribute guard: what a judged solution may reach, enforced on every attribute access.

Loaded by ``_child.py`` in the judge's child process (it must not import minimodel). Before
the learner's file runs, its syntax tree is rewritten so that every attribute *read*
``obj.name`` becomes ``__mm_getattr__(obj, "name")``, every ``from X import a`` becomes a
guarded lookup, and its builtins are a reduced set (no ``open``, ``exec``, ``eval``,
``compile``, ``globals``, ``vars``...; ``getattr``, ``setattr``, ``__import__`` guarded). The
solution's code then contains no raw attribute access at all, so it cannot reach:

* names starting with ``_`` on objects it did not define (``torch._C``, ``np.core._…``), or
  introspection dunders (``__globals__``, ``__code__``, ``__class__``, ``__traceback__``…) and
  frame/traceback attributes, the usual ways out of any in-process fence;
* modules outside the exercise's allow-list (``os``, ``sys``, ``ctypes``, ``subprocess``,
  ``importlib``, ``gc``, ``pickle``…), whichever object they are reached through
  (``torch.os``, ``numpy.ctypeslib.ctypes``);
* the forbidden APIs of the exercise, by name and by identity (``torch.nn.modules.GELU`` is
  the same object as ``torch.nn.GELU``).

A violation is reported through ``report(kind, name)``, which ends the process at once (a
solution cannot catch it). Static problems (identifiers starting with ``__mm``, ``from X
import *``, relative imports, assigning ``_`` attributes on other objects) are refused before
anything runs.
"""

import ast
import builtins
import types

# Dunders that open the way to an object's internals: never readable by a solution.
DENIED_DUNDERS = {
    "__dict__", "__class__", "__bases__", "__base__", "__mro__", "__subclasses__",
    "__globals__", "__code__", "__closure__", "__builtins__", "__getattribute__",
    "__getattr__", "__setattr__", "__delattr__", "__reduce__", "__reduce_ex__", "__self__",
    "__func__", "__wrapped__", "__loader__", "__spec__", "__import__", "__traceback__",
    "__context__", "__cause__", "__init_subclass__", "__class_getitem__", "__objclass__",
    "__defaults__", "__kwdefaults__", "__getstate__", "__setstate__", "__weakref__",
    "__path__", "__file__", "__cached__", "__module__", "__dictoffset__", "__set_name__",
}
# Frame, traceback, generator and code internals (reached from exceptions and generators).
DENIED_PLAIN = {"tb_frame", "tb_next", "f_back", "f_globals", "f_locals", "f_builtins",
                "f_code", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code",
                "co_consts", "co_code"}
REMOVED_BUILTINS = {"open", "exec", "eval", "compile", "globals", "locals", "vars",
                    "breakpoint", "input", "help", "exit", "quit", "copyright", "credits",
                    "license", "memoryview"}
GUARD_PREFIX = "__mm_"


class StaticProblem(Exception):
    """A construct refused before the solution runs: (name, line)."""


class _Rewriter(ast.NodeTransformer):
    """Attribute reads -> __mm_getattr__; ``from X import a`` -> guarded lookups."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            call = ast.Call(func=ast.Name("__mm_getattr__", ast.Load()),
                            args=[node.value, ast.Constant(node.attr)], keywords=[])
            return ast.copy_location(call, node)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if node.level:
            raise StaticProblem("relative import", node.lineno)
        if any(alias.name == "*" for alias in node.names):
            raise StaticProblem(f"from {node.module} import *", node.lineno)
        targets = ast.Tuple([ast.Name(a.asname or a.name, ast.Store()) for a in node.names],
                            ast.Store())
        call = ast.Call(func=ast.Name("__mm_from__", ast.Load()),
                        args=[ast.Constant(node.module),
                              ast.Tuple([ast.Constant(a.name) for a in node.names],
                                        ast.Load())], keywords=[])
        return ast.copy_location(ast.Assign(targets=[targets], value=call), node)


def _static_checks(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = node.name
        elif isinstance(node, ast.arg):
            name = node.arg
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            name = next((n for n in node.names if n.startswith(GUARD_PREFIX)), None)
        elif isinstance(node, ast.alias):
            name = node.asname or node.name
        if name and name.startswith(GUARD_PREFIX):
            raise StaticProblem(name, getattr(node, "lineno", 0))
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if node.attr.startswith("_") and not own:
                raise StaticProblem(f"assigning the attribute {node.attr}", node.lineno)
        if isinstance(node, ast.MatchClass):
            for attr in node.kwd_attrs:
                if attr.startswith("_"):
                    raise StaticProblem(f"pattern attribute {attr}", node.lineno)


def compile_solution(source: str, filename: str) -> types.CodeType:
    """Parse, check and rewrite the solution; raises StaticProblem or SyntaxError."""
    tree = ast.parse(source, filename)
    _static_checks(tree)
    tree = ast.fix_missing_locations(_Rewriter().visit(tree))
    return builtins.compile(tree, filename, "exec")


class Guard:
    """The runtime half: decides what a solution may read and import.

    Args:
        allowed_modules: top-level packages a solution may import or hold (``numpy``...).
        forbidden_names: dotted names forbidden by the exercise (``torch.nn.functional.gelu``).
        forbidden_objects: the same APIs resolved to objects (ids), so that any alias trips.
        report: ``report(kind, name)``; must not return (it ends the process).
    """

    def __init__(self, allowed_modules, forbidden_names, forbidden_objects, report):
        self.allowed = set(allowed_modules)
        self.forbidden = list(forbidden_names)
        self.forbidden_ids = {id(o): n for n, o in forbidden_objects.items()}
        self.keep = list(forbidden_objects.values())  # ids stay valid while we hold them
        self.report = report
        self.real_getattr = builtins.getattr
        self.real_import = builtins.__import__
        self.own_module = "solution"

    # ------------------------------------------------------------------ decisions
    def _forbidden_name(self, dotted):
        for bad in self.forbidden:
            if dotted == bad or dotted.startswith(bad + "."):
                return bad
        return None

    def _owned(self, obj):
        kind = obj if isinstance(obj, type) else type(obj)
        return self.real_getattr(kind, "__module__", None) == self.own_module

    def check_module_name(self, dotted, how):
        if dotted.partition(".")[0] not in self.allowed:
            self.report(how, dotted)
        bad = self._forbidden_name(dotted)
        if bad:
            self.report(how, bad)

    def check_value(self, value, path):
        name = self.forbidden_ids.get(id(value))
        if name is None:
            inner = self.real_getattr(value, "__func__", None) if isinstance(
                value, types.MethodType) else None
            name = self.forbidden_ids.get(id(inner)) if inner is not None else None
        if name is not None:
            self.report("attribute", f"{path} (= {name})")
        if isinstance(value, types.ModuleType):
            self.check_module_name(value.__name__, "module")
        return value

    # ------------------------------------------------------------------ the solution's view
    def getattr(self, obj, name, *default):
        if not isinstance(name, str):
            raise TypeError("attribute name must be a string")
        if name.startswith("_") and not self._owned(obj):
            if (name.startswith("__") and name.endswith("__")) and name not in DENIED_DUNDERS:
                pass  # operator and protocol dunders (__len__, __add__, __name__...) are fine
            else:
                self.report("attribute", name)
        if name in DENIED_PLAIN:
            self.report("attribute", name)
        prefix = obj.__name__ if isinstance(obj, types.ModuleType) else None
        if prefix is not None:
            bad = self._forbidden_name(f"{prefix}.{name}")
            if bad:
                self.report("attribute", bad)
        try:
            value = self.real_getattr(obj, name)
        except AttributeError:
            if default:
                return default[0]
            raise
        return self.check_value(value, f"{prefix or type(obj).__name__}.{name}")

    def hasattr(self, obj, name):
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def setattr(self, obj, name, value):
        if name.startswith("_") and not self._owned(obj):
            self.report("attribute", name)
        builtins.setattr(obj, name, value)

    def delattr(self, obj, name):
        if name.startswith("_") and not self._owned(obj):
            self.report("attribute", name)
        builtins.delattr(obj, name)

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level:
            self.report("import", "a relative import")
        self.check_module_name(name, "import")
        for item in fromlist or ():
            self.check_module_name(f"{name}.{item}", "import")
        return self.check_value(self.real_import(name, None, None, fromlist, 0), name)

    def from_import(self, module, names):
        top = self.import_(module, fromlist=names)
        target = top
        for part in module.split(".")[1:]:
            target = self.real_getattr(target, part)
        return tuple(self.getattr(target, n) for n in names)

    def builtins_dict(self):
        """The solution's ``__builtins__``: the safe ones, with the guarded replacements."""
        safe = {k: v for k, v in vars(builtins).items() if k not in REMOVED_BUILTINS}
        safe.update(getattr=self.getattr, hasattr=self.hasattr, setattr=self.setattr,
                    delattr=self.delattr, __import__=self.import_)
        return safe

    def solution_globals(self, shown_as):
        return {"__name__": self.own_module, "__file__": shown_as,
                "__builtins__": self.builtins_dict(), "__mm_getattr__": self.getattr,
                "__mm_from__": self.from_import}


def resolve(dotted, modules):
    """The object a dotted name denotes (``torch.nn.functional.gelu``) if it is already
    loaded, else None. Nothing is imported: looking a name up must not run new code (and a
    module that is not loaded yet is refused by name when the solution asks for it)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        obj = modules.get(".".join(parts[:cut]))
        if obj is None:
            continue
        for part in parts[cut:]:
            namespace = obj.__dict__ if hasattr(obj, "__dict__") else {}
            if part not in namespace:
                return None
            obj = namespace[part]
        return obj
    return None
