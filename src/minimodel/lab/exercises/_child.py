"""Child-side harness of the exercise judge: runs the learner's function on the cases.

It runs inside the sandbox (``python -I -B _child.py config.json``, see ``sandbox.py``). The
security boundary is the operating system's (namespaces, read-only mounts, limits), because
Python code cannot fence in other Python code running in the same process; what this process
adds is the teaching rule at the call (a forbidden API reached under any name reports
``forbidden``), not a fence. It does not import minimodel (the package is out of sight in the
sandbox): its helpers ``_enforce.py`` and ``family.py`` are copied next to it. What it does:

1. import NumPy (and torch, when the solution imports it and the exercise allows it), replace
   the exercise's forbidden callables by stubs that report ``forbidden`` and refuse importing
   any module off the exercise's allow-list (``_enforce.py``) and starting a process (a new
   Python has no stubs), then say ``ready``: the judge's clock starts there, so torch's
   import is not charged to the solution;
2. load the solution as a real module named ``solution`` (a UTF-8 BOM is fine; postponed
   annotations resolve against it), and call its function on each case's inputs;
3. send each case's outputs back as plain arrays (the ``.npy`` format, uncompressed), which
   the judge checks against the shape and dtype it expects before it reads a byte of data.

Everything goes to the judge through one inherited pipe (a ``forbidden`` event too), as
frames: a 4-byte big-endian length, then ``J`` and a JSON event, or ``A`` and one ``.npy``
array. An output whose shape or dtype is not the one expected is sent as its header alone (the
judge reports the mismatch from it); the judge refuses anything else (see
``sandbox._Channel``).
"""

import faulthandler
import importlib.util
import io
import json
import os
import struct
import sys
import traceback
import types


def to_array(value, np):
    """Learner output -> ndarray; torch tensors are detached, numbers become 0-d arrays."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def npy_bytes(array, expect, np):
    """``array`` in the ``.npy`` format; only its header when its shape or dtype is not the
    ``expect``-ed ``[shape, dtype]`` (a 0-d result may have any numeric dtype)."""
    fits = list(array.shape) == expect[0] and (
        array.dtype.str == expect[1] or array.ndim == 0)
    buffer = io.BytesIO()
    if fits:
        np.lib.format.write_array(buffer, array, allow_pickle=False)
    else:
        np.lib.format.write_array_header_2_0(
            buffer, np.lib.format.header_data_from_array_1_0(array))
    return buffer.getvalue()


def short_tb(exc, shown_as):
    """The traceback lines that point into the learner's file."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == shown_as]
    return [f"line {f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-4:]]


def load_solution(path, shown_as):
    """The solution as module ``solution`` (registered, so dataclasses and typing find it)."""
    with open(path, encoding="utf-8-sig") as fh:  # -sig: a file saved with a BOM still runs
        source = fh.read()
    module = types.ModuleType("solution")
    module.__file__ = shown_as
    sys.modules["solution"] = module
    exec(compile(source, shown_as, "exec"), module.__dict__)  # noqa: S102 - in the sandbox
    return module


def load_beside(name):
    """A helper module copied next to this file (the package itself is out of sight)."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    with open(sys.argv[1], encoding="utf-8") as fh:
        cfg = json.load(fh)

    def send(kind, payload):
        data = struct.pack(">I", len(payload) + 1) + kind + payload
        while data:
            data = data[os.write(cfg["channel_fd"], data):]

    def emit(**event):
        send(b"J", json.dumps(event).encode())

    import numpy as np
    torch = None
    if cfg["preimport_torch"]:
        try:
            import torch  # noqa: F811 - before the clock starts
        except ImportError:
            pass  # hidden in a NumPy-only exercise: the solution's own import says so
    shown_as = cfg["shown_as"]
    load = np.load  # the harness's own, before np.load (a forbidden API) is replaced
    rule = cfg["runtime_rule"]
    enforce = load_beside("_enforce")
    if rule.get("grad_off"):  # "without autograd": torch records no graph, in any thread
        try:
            import torch  # noqa: F811 - whatever spelling imports it later gets this module
            enforce.grad_off_everywhere(torch)
        except ImportError:
            pass  # hidden: a NumPy-only exercise
    enforce.enforce(rule["entries"], rule["refused"], enforce.reporter(shown_as, emit),
                    load_beside("family"), rule.get("allowed"), shown_as,
                    bool(rule.get("grad_off")), rule.get("library_only", ()))
    enforce.refuse_processes(enforce.reporter(shown_as, emit))  # a new Python has no stubs
    emit(event="ready")
    faulthandler.dump_traceback_later(cfg["dump_after"], exit=False)
    try:
        module = load_solution(cfg["solution"], shown_as)
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        emit(event="load_error", type="SyntaxError",
             message=(f"{exc.msg} ({shown_as}, line {exc.lineno}"
                      + (f": {text}" if text else "") + ")")[:500], where=[])
        return
    except BaseException as exc:  # ImportError, SystemExit ... all reportable
        emit(event="load_error", type=type(exc).__name__, message=str(exc)[:500],
             where=short_tb(exc, shown_as))
        return
    fn = getattr(module, cfg["function"], None)
    if not callable(fn):
        emit(event="load_error", type="AttributeError", key="no_function",
             message=f"the file defines no function named {cfg['function']!r}", where=[])
        return
    framework = getattr(module, "FRAMEWORK", "numpy")
    if framework not in ("numpy", "torch"):  # "PyTorch", "np": say which values there are
        value = framework if isinstance(framework, str) else repr(framework)
        emit(event="load_error", type="ValueError", key="framework_unknown", value=value[:80],
             message=f"FRAMEWORK = {value[:80]!r} is neither 'torch' nor 'numpy'", where=[])
        return
    use_torch = framework == "torch"
    torch = sys.modules.get("torch") if use_torch else None
    if use_torch and torch is None:
        emit(event="load_error", type="ImportError", key="needs_torch",
             message="FRAMEWORK = 'torch' needs `import torch` at the top of the file",
             where=[])
        return
    emit(event="loaded", framework="torch" if use_torch else "numpy")
    for i, case in enumerate(cfg["cases"]):
        with load(case["inputs"], allow_pickle=False) as data:
            values = {**{k: data[k] for k in data.files}, **case["scalars"]}
        if use_torch:
            values = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                      for k, v in values.items()}
        try:
            result = fn(*[values[name] for name in case["order"]],
                        **{name: values[name] for name in case["keywords"]})
            outs = list(result) if cfg["n_outputs"] > 1 and isinstance(result, (tuple, list)) \
                else [result]
            arrays = [to_array(o, np) for o in outs]
            bad = [a.dtype for a in arrays if a.dtype.kind not in "biuf"]
            if bad:
                raise TypeError(f"returned a non-numeric value (dtype {bad[0]})")
        except BaseException as exc:
            emit(event="case", index=i, ok=False, type=type(exc).__name__,
                 message=str(exc)[:500], where=short_tb(exc, shown_as))
            continue
        emit(event="case", index=i, ok=True, n=len(arrays),
             python_scalar=[isinstance(o, (int, float)) for o in outs])
        for a, expect in zip(arrays, case["expect"]):  # the judge reads no more than it expects
            send(b"A", npy_bytes(a, expect, np))
    emit(event="done")


if __name__ == "__main__":
    main()
