"""Child-side harness of the exercise judge (copied into the scratch folder, run with -I).

It must not import minimodel: the package is hidden from the sandbox. Order matters:

1. An **audit hook** (PEP 578) is installed before anything else runs. It cannot be removed
   from Python, and its state lives only in its closure, which the solution cannot reach
   (see ``_child_guard.py``). Once armed it ends the process on: importing minimodel,
   opening a file for writing outside the scratch folder or reading the package's sources,
   executing code compiled from them, starting processes or signalling others, sockets,
   ctypes, unpickling, changing the profiler/tracer, and ``gc`` introspection.
2. NumPy (and torch, when the exercise allows it) are imported by the harness, so their own
   start-up is not mistaken for the solution's doing.
3. With torch, a dispatch-level tripwire refuses the exercise's forbidden operators (``aten``
   ops such as ``gelu`` or ``native_layer_norm``), whatever Python route reached them.
4. The solution is compiled through the attribute guard and run with reduced builtins.

Every event and every violation goes to the judge through an inherited pipe (its fd number is
in the config), not through a file the solution could overwrite. A violation is one line,
then ``os._exit(86)``: no ``except`` in the solution can swallow it.
"""

import faulthandler
import json
import os
import sys

FORBIDDEN_EXIT = 86


def install_audit_hook(channel, scratch, hidden_roots, forbidden_modules, solution_name):
    """Install the hook; returns ``arm(code)``, which switches on the rules for the solution
    (``code``, the solution's own compiled module, may of course be executed)."""
    state = {"armed": False, "busy": False, "code": None}
    getframe = sys._getframe
    write, exit_now = os.write, os._exit
    dumps = json.dumps
    scratch = os.path.realpath(scratch) + os.sep
    hidden = tuple(os.path.realpath(r) + os.sep for r in hidden_roots)
    always = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
              "os.fork", "os.forkpty", "os.kill", "os.killpg", "signal.pthread_kill",
              "pty.spawn", "socket.", "ctypes.", "pickle.find_class", "sys.setprofile",
              "sys.settrace", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
              "sys.addaudithook", "os.setuid", "os.setgid", "os.chroot", "winreg.", "msvcrt.")
    # File-system changes are fine inside the scratch folder (tempfile probes it), not outside.
    path_events = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link",
                   "os.truncate", "os.chmod", "os.chown", "os.utime", "shutil.rmtree",
                   "shutil.copyfile", "shutil.copytree", "shutil.move")

    def violation(kind, name):
        line, frame = None, getframe(1)
        while frame is not None:  # the innermost line of the solution, if it is on the stack
            if frame.f_code.co_filename == solution_name:
                line = frame.f_lineno
                break
            frame = frame.f_back
        write(channel, (dumps({"event": "forbidden", "how": kind, "name": str(name)[:300],
                               "line": line}) + "\n").encode())
        exit_now(FORBIDDEN_EXIT)

    def other_process(real):
        """/proc/<pid>/... of any process but this one (the judge's environment, its fds)."""
        parts = real.split(os.sep)
        return len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and \
            parts[2] != str(os.getpid())

    def outside_scratch(path):
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return True
        return not (real + os.sep).startswith(scratch)

    def hook(event, args):
        if state["busy"]:
            return
        state["busy"] = True
        try:
            if event == "import" and args[0].partition(".")[0] in forbidden_modules:
                violation("import", args[0])
            if not state["armed"]:
                return
            if event in path_events:
                for arg in args:
                    if isinstance(arg, (str, bytes, os.PathLike)) and outside_scratch(arg):
                        violation("runtime", f"{event} {os.fsdecode(arg)}")
            elif event.startswith(always):
                if event == "os.kill" and args and args[0] == os.getpid():
                    return  # a solution may raise signals at itself (KeyboardInterrupt tests)
                violation("runtime", event)
            elif event == "open":
                path, mode = args[0], args[1]
                if isinstance(path, int):
                    return  # an already-open descriptor
                writing = mode is not None and any(c in str(mode) for c in "wax+")
                flags = args[2] if len(args) > 2 else 0
                writing = writing or bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
                real = os.path.realpath(os.fsdecode(path)) + os.sep
                if writing and outside_scratch(path):
                    violation("runtime", f"writing {os.fsdecode(path)}")
                if real.startswith(hidden) or other_process(real):
                    violation("runtime", f"reading {os.fsdecode(path)}")
            elif event == "exec" and args[0] is not state["code"]:
                filename = getattr(args[0], "co_filename", "")
                if (os.path.realpath(filename) + os.sep).startswith(hidden):
                    violation("runtime", f"executing {filename}")
        finally:
            state["busy"] = False

    sys.addaudithook(hook)

    def arm(code):
        state["code"], state["armed"] = code, True
    return arm


def load_guard_module(path):
    """Import _child_guard.py from the scratch folder (``-I`` keeps it off sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_mm_child_guard", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_tripwire(torch, forbidden_ops, report):
    """Refuse forbidden aten operators at the dispatcher, whichever Python name reached them."""
    if not forbidden_ops:
        return None
    from torch.utils._python_dispatch import TorchDispatchMode

    banned = set(forbidden_ops)

    class Tripwire(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            packet = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
            if packet in banned:
                report("operator", f"aten.{packet}")
            return func(*args, **(kwargs or {}))

    mode = Tripwire()
    mode.__enter__()
    # Warm up: torch initialises parts of itself on the first dispatched operation (it probes
    # the temp folder, sets variables); let that happen now, before the rules are armed.
    x = torch.ones(2, 2, requires_grad=True)
    (x @ x).softmax(-1).sum().backward()
    return mode


def to_numpy(value, np):
    """Learner output -> ndarray; torch tensors are detached, numbers become 0-d arrays."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def short_tb(exc, shown_as):
    """The traceback lines that point into the learner's file."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == shown_as]
    return [f"line {f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-4:]]


def main():
    with open(sys.argv[1], encoding="utf-8") as fh:
        cfg = json.load(fh)
    channel = cfg["channel_fd"]

    def emit(**event):
        os.write(channel, (json.dumps(event) + "\n").encode())

    arm = install_audit_hook(channel, cfg["scratch"], cfg["hidden_roots"],
                             set(cfg["forbidden_modules"]), cfg["shown_as"])
    faulthandler.dump_traceback_later(cfg["dump_after"], exit=False)
    guard_mod = load_guard_module(cfg["guard"])
    import numpy as np

    torch = None
    if cfg["preimport_torch"]:
        import torch  # noqa: F811  (imported here, before the solution runs)
    load, savez = np.load, np.savez

    def report(kind, name):
        line, frame = None, sys._getframe(1)
        while frame is not None:  # the innermost line of the solution on the stack
            if frame.f_code.co_filename == cfg["shown_as"]:
                line = frame.f_lineno
                break
            frame = frame.f_back
        emit(event="forbidden", how=kind, name=str(name)[:300], line=line)
        os._exit(FORBIDDEN_EXIT)

    forbidden_objects = {}
    for name in cfg["forbidden"]:
        obj = guard_mod.resolve(name, sys.modules)
        if obj is not None and not isinstance(obj, (str, int, float, bool)):
            forbidden_objects[name] = obj
    guard = guard_mod.Guard(cfg["allowed_modules"], cfg["forbidden"], forbidden_objects, report)
    shown_as = cfg["shown_as"]
    with open(cfg["solution"], encoding="utf-8") as fh:
        source = fh.read()
    try:
        code = guard_mod.compile_solution(source, shown_as)
    except guard_mod.StaticProblem as exc:
        report("static", f"{exc.args[0]} (line {exc.args[1]})")
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        emit(event="load_error", type="SyntaxError",
             message=(f"{exc.msg} ({shown_as}, line {exc.lineno}"
                      + (f": {text}" if text else "") + ")")[:500], where=[])
        return
    if torch is not None:
        torch_tripwire(torch, cfg["forbidden_ops"], report)
    namespace = guard.solution_globals(shown_as)
    arm(code)
    try:
        exec(code, namespace)  # noqa: S102 - the rewritten, guarded solution
    except BaseException as exc:  # SyntaxError, ImportError, SystemExit ... all reportable
        emit(event="load_error", type=type(exc).__name__, message=str(exc)[:500],
             where=short_tb(exc, shown_as))
        return
    fn = namespace.get(cfg["function"])
    if not callable(fn):
        emit(event="load_error", type="AttributeError", key="no_function",
             message=f"the file defines no function named {cfg['function']!r}", where=[])
        return
    use_torch = namespace.get("FRAMEWORK", "numpy") == "torch"
    if use_torch and torch is None:
        emit(event="load_error", type="ImportError", key="needs_torch",
             message="FRAMEWORK = 'torch' needs `import torch` at the top of the file",
             where=[])
        return
    emit(event="loaded", framework="torch" if use_torch else "numpy")
    for i, case in enumerate(cfg["cases"]):
        with load(case["inputs"], allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        values = {**arrays, **case["scalars"]}
        if use_torch:
            values = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                      for k, v in values.items()}
        args = [values[name] for name in case["order"]]
        try:
            result = fn(*args)
        except BaseException as exc:
            emit(event="case", index=i, ok=False, type=type(exc).__name__,
                 message=str(exc)[:500], where=short_tb(exc, shown_as))
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
        savez(case["outputs"], **{f"out_{j}": a for j, a in enumerate(arrays_out)})
        emit(event="case", index=i, ok=True, n=len(arrays_out),
             python_scalar=[isinstance(o, (int, float)) for o in outs])
    emit(event="done")


if __name__ == "__main__":
    main()
