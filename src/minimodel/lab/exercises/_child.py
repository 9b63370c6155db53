"""Child-side harness of the exercise judge (copied into a temp dir and run with ``python -I``).

It must not import minimodel: it runs in a scrubbed, isolated interpreter. Protocol:

* ``argv[1]`` is a JSON config: solution path, function name, forbidden names, cases (each with
  an ``.npz`` of array arguments, scalar arguments inline, and an output ``.npz`` path).
* Events are appended, one JSON object per line, to ``config["events"]`` as they happen, so a
  parent that kills us on timeout still knows how far we got.

Tripwires: before the learner's file is imported, a meta-path finder (1) refuses to import any
forbidden module (``minimodel`` ...) and (2) replaces forbidden attributes (``torch.nn.functional
.scaled_dot_product_attention`` ...) right after their module is executed. Calling one raises
``ForbiddenError``, a BaseException so that ``except Exception`` in the solution cannot hide it;
every hit is also logged at once. This guards honest mistakes and casual obfuscation, not a
determined attacker.
"""

import faulthandler
import importlib.abc
import importlib.util
import json
import os
import sys
import traceback

EVENTS = None
SOLUTION = None  # absolute path of the learner's file (its copy in the temp dir)


class ForbiddenError(BaseException):
    """Raised by a tripwire: the solution used an API this exercise forbids."""


def emit(**event):
    with open(EVENTS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(event) + "\n")
        fh.flush()


def solution_line():
    """Line of the innermost frame in the learner's file, or None (e.g. at import time)."""
    frame = sys._getframe(1)
    while frame is not None:
        if SOLUTION and os.path.abspath(frame.f_code.co_filename) == SOLUTION:
            return frame.f_lineno
        frame = frame.f_back
    return None


def hit(name, how):
    emit(event="forbidden", name=name, how=how, line=solution_line())
    raise ForbiddenError(f"{name} is not allowed in this exercise")


def make_tripwire(name):
    def tripwire(*args, **kwargs):
        hit(name, "call")
    tripwire.__name__ = name.rsplit(".", 1)[-1]
    return tripwire


class Tripwires(importlib.abc.MetaPathFinder):
    """Blocks forbidden imports and patches forbidden attributes as modules load.

    Patching waits until the top-level package (``torch``) has finished importing: torch
    subclasses some of the classes we guard while it initialises. A forbidden class keeps its
    identity (subclassing still works) but its ``__init__`` trips; a function is replaced.
    """

    def __init__(self, forbidden):
        self.forbidden = list(forbidden)
        self.ready = set()  # top-level packages whose import has completed

    def find_spec(self, name, path=None, target=None):
        for bad in self.forbidden:
            if name == bad or name.startswith(bad + "."):
                hit(name, "import")
        if not any(bad.startswith(name + ".") for bad in self.forbidden):
            return None
        for finder in sys.meta_path:  # let the real finders locate it, then wrap the loader
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                self._wrap(spec.loader, name)
                return spec
        return None

    def _wrap(self, loader, module_name):
        original = loader.exec_module

        def exec_module(module):
            original(module)
            top = module_name.partition(".")[0]
            if module_name == top:
                self.ready.add(top)
            if top in self.ready:
                self.patch(sys.modules.get(module_name, module), module_name)
        loader.exec_module = exec_module

    def patch(self, module, module_name):
        for bad in self.forbidden:
            if not bad.startswith(module_name + "."):
                continue
            *chain, leaf = bad[len(module_name) + 1:].split(".")
            owner = module
            for part in chain:
                owner = getattr(owner, part, None)
                if owner is None:
                    break
            target = getattr(owner, leaf, None) if owner is not None else None
            if target is None or getattr(target, "_minimodel_tripwire", False):
                continue
            wire = make_tripwire(bad)
            if isinstance(target, type):
                target.__init__ = wire
                target._minimodel_tripwire = True
            else:
                wire._minimodel_tripwire = True
                setattr(owner, leaf, wire)


def to_numpy(value, np):
    """Learner output -> ndarray; torch tensors are detached, numbers become 0-d arrays."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def short_tb(exc, solution):
    """The traceback lines that point into the learner's file (all lines if none do)."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) == solution] or frames[-3:]
    return [f"line {f.lineno} in {f.name}: {(f.line or '').strip()}" for f in mine[-4:]]


def load_error_message(exc, shown_as):
    """One line for a file that cannot be loaded; a SyntaxError names the learner's file."""
    if isinstance(exc, SyntaxError):
        text = (exc.text or "").strip()
        return (f"{exc.msg} ({shown_as}, line {exc.lineno}" + (f": {text}" if text else "")
                + ")")[:500]
    return str(exc)[:500]


def main():
    global EVENTS, SOLUTION
    with open(sys.argv[1], encoding="utf-8") as fh:
        cfg = json.load(fh)
    EVENTS = cfg["events"]
    # If we hang, print every thread's stack shortly before the parent kills us.
    faulthandler.dump_traceback_later(cfg["dump_after"], exit=False)
    sys.meta_path.insert(0, Tripwires(cfg["forbidden"]))
    import numpy as np

    solution = SOLUTION = os.path.abspath(cfg["solution"])
    spec = importlib.util.spec_from_file_location("solution", solution)
    module = importlib.util.module_from_spec(spec)
    sys.modules["solution"] = module
    try:
        spec.loader.exec_module(module)
    except ForbiddenError:
        return
    except BaseException as exc:  # SyntaxError, ImportError, SystemExit ... all reportable
        emit(event="load_error", type=type(exc).__name__,
             message=load_error_message(exc, cfg.get("shown_as", "solution.py")),
             where=short_tb(exc, solution))
        return
    fn = getattr(module, cfg["function"], None)
    if not callable(fn):
        emit(event="load_error", type="AttributeError",
             message=f"the file defines no function named {cfg['function']!r}", where=[])
        return
    use_torch = getattr(module, "FRAMEWORK", "numpy") == "torch"
    if use_torch:
        import torch
    emit(event="loaded", framework="torch" if use_torch else "numpy")

    for i, case in enumerate(cfg["cases"]):
        with np.load(case["inputs"], allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        values = {**arrays, **case["scalars"]}
        if use_torch:
            values = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                      for k, v in values.items()}
        args = [values[name] for name in case["order"]]
        try:
            result = fn(*args)
        except ForbiddenError:
            return
        except BaseException as exc:
            emit(event="case", index=i, ok=False, type=type(exc).__name__,
                 message=str(exc)[:500], where=short_tb(exc, solution))
            continue
        outs = list(result) if cfg["n_outputs"] > 1 and isinstance(result, (tuple, list)) \
            else [result]
        try:
            arrays_out = [to_numpy(o, np) for o in outs]
            bad = [a.dtype for a in arrays_out if a.dtype.kind not in "biuf"]
            if bad:
                raise TypeError(f"returned a non-numeric value (dtype {bad[0]})")
        except Exception as exc:
            emit(event="case", index=i, ok=False, type=type(exc).__name__,
                 message=str(exc)[:500], where=[])
            continue
        np.savez(case["outputs"], **{f"out_{j}": a for j, a in enumerate(arrays_out)})
        emit(event="case", index=i, ok=True, n=len(arrays_out),
             python_scalar=[isinstance(o, (int, float)) for o in outs])
    emit(event="done")


if __name__ == "__main__":
    main()
