"""What a dotted name IS, not how it is spelt: the forbidden-API rule's alias table.

``torch.nn.CrossEntropyLoss`` and ``torch.nn.modules.loss.CrossEntropyLoss`` are the same
class; ``torch.nn.modules.activation.F`` is the module ``torch.nn.functional``. The table is
built from the libraries themselves: every module of ``numpy`` and ``torch`` that importing
them loads is walked, and every path that reaches the same object (a function, a class, a
module) gets the same *canonical* name. It is computed in the judge's process (never in a
solution's), once per installed version, and cached in the user's cache folder.

The *family* rule adds what identity cannot see: a function with the same name elsewhere (a
top-level twin such as ``torch.embedding`` for ``torch.nn.functional.embedding``, the C
binding ``torch._C._nn.cross_entropy_loss``) or a private fused op of the same computation
(``torch._native_multi_head_attention`` for ``torch.nn.MultiheadAttention``). Names are
compared by their words, ignoring case and the words ``native``, ``fused``, ``loss``,
``forward`` and ``impl``.

This is a teaching rule, not a security boundary (see ``docs/judge.md``).
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import sys
import types
import warnings
from pathlib import Path

from minimodel._fileio import atomic_write_text
from minimodel.lab.exercises.family import fused_activation_ops
from minimodel.lab.exercises.family import same_family, words  # noqa: F401 - re-exported

LIBRARIES = ("numpy", "torch")
# torch modules that ``import torch`` does not load but a solution may import: walked too, so
# the scan knows them as modules (``from torch.nn.attention import flex_attention`` names a
# module, and imports; calling its ``flex_attention`` is refused)
TORCH_MODULES = ("torch.nn.functional", "torch.nn.attention.flex_attention")
LAYOUT = 3  # bumped when the table's content changes: a cached table of another layout is rebuilt


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "minimodel"


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def build_table(libraries: tuple[str, ...] = LIBRARIES) -> dict[str, object]:
    """``{"paths": {path: canonical}, "modules": [module names]}`` for the installed
    ``libraries`` (imported here). Only paths that share their object with another path are
    kept (a name reached one way needs no entry)."""
    groups: dict[int, list[str]] = {}
    keep: list[object] = []  # hold the objects so their ids stay unique while we walk
    modules: set[str] = set()
    named: dict[int, str] = {}  # a module's canonical name is its own __name__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated attributes warn when touched
        for lib in libraries:
            _walk(lib, groups, keep, modules, named)
    paths = {}
    for key, members in groups.items():
        if len(members) < 2:
            continue
        canonical = named.get(key) or min(members, key=lambda p: (p.count("._"),
                                                                  p.count("."), p))
        paths.update({p: canonical for p in members if p != canonical})
    return {"paths": paths, "modules": sorted(modules), "aten_backward": aten_backward(),
            "fused_activation": fused_activation(), "layout": LAYOUT}


def aten_backward() -> list[str]:
    """The ATen gradient kernels of the installed torch: every op in its registry whose name
    holds the word ``backward`` (``embedding_dense_backward``); none without torch."""
    torch = sys.modules.get("torch")
    names = getattr(getattr(torch, "_C", None), "_dispatch_get_all_op_names", lambda: [])()
    ops = {n.split("::", 1)[1].split(".")[0] for n in names if n.startswith("aten::")}
    return sorted(op for op in ops if "backward" in op.split("_"))


def fused_activation() -> dict[str, str]:
    """The ops of the installed torch that take the activation to apply as an argument
    (``{"mkldnn::_linear_pointwise": "torch.ops.mkldnn._linear_pointwise"}``, read from its
    op schemas: :func:`family.fused_activation_ops`); none without torch."""
    torch = sys.modules.get("torch")
    schemas = getattr(getattr(torch, "_C", None), "_jit_get_all_schemas", lambda: [])()
    return fused_activation_ops(schemas)


def _walk(lib: str, groups: dict[int, list[str]], keep: list[object], modules: set[str],
          named: dict[int, str]) -> None:
    """Add every module of ``lib`` now loaded, and every module, class and function they
    hold, to ``groups`` (object id -> the paths that reach it)."""
    try:
        __import__(lib)
        if lib == "torch":  # and the modules a solution may import that torch loads lazily
            for module in TORCH_MODULES:
                __import__(module)
    except ImportError:
        return
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or not (
                name == lib or name.startswith(lib + ".")):
            continue
        modules.add(name)
        groups.setdefault(id(module), []).append(name)
        named[id(module)] = module.__name__
        keep.append(module)
        for attr, obj in list(vars(module).items()):
            if attr.startswith("__") or not (isinstance(obj, (type, types.ModuleType))
                                             or callable(obj)):
                continue
            if isinstance(obj, types.ModuleType) and not obj.__name__.startswith(lib):
                continue
            groups.setdefault(id(obj), []).append(f"{name}.{attr}")
            keep.append(obj)


@functools.lru_cache(maxsize=4)
def table(libraries: tuple[str, ...] = LIBRARIES) -> dict[str, object]:
    """The alias table of the installed ``libraries``, from the cache when it is there
    (a solution that never names torch needs no torch import here)."""
    versions = "-".join(f"{lib}{_version(lib) or 'none'}" for lib in libraries)
    path = cache_dir() / f"aliases-py{sys.version_info[0]}.{sys.version_info[1]}-{versions}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("paths"), dict) \
                and data.get("layout") == LAYOUT:  # a table cached by an older judge: rebuilt
            return data
    except (OSError, ValueError):
        pass
    data = build_table(libraries)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(data))
    except OSError:
        pass  # a read-only home: the table is rebuilt next time
    return data


def canonical(dotted: str, paths: dict[str, str]) -> str:
    """``dotted`` with its longest known prefix replaced by that object's canonical name,
    repeatedly (``torch.nn.modules.activation.F.gelu`` -> ``torch.nn.functional.gelu``)."""
    for _ in range(8):
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            head = ".".join(parts[:i])
            if head in paths:
                dotted = ".".join([paths[head], *parts[i:]])
                break
        else:
            return dotted
    return dotted
