"""Run a learner's solution in a separate, fenced-in process.

Why a process and not ``exec``: a solution may loop forever, eat memory, print gigabytes, call
``sys.exit`` or try to get out; none of that may touch the judge, the package, the learner's
files or the lab's progress.

The child is ``python -I _child.py config.json`` in a fresh scratch folder, wrapped in the
namespaces and limits :mod:`minimodel.lab.exercises.isolation` finds on this machine (full
isolation with bubblewrap; else partial, with the reason), with a scrubbed environment, CPU
time, memory, file-size and process-count limits that come from the exercise (never from the
solution's text). Inputs travel as ``.npz`` files and outputs come back the same way (read with
``allow_pickle=False``); events and violations come back through an inherited pipe. Starting it
in its own session, the wall-clock limit that kills the group and the output capture are
:func:`minimodel.lab.subprocess_runner.run_child`'s; the cgroup (when there is one) kills every
process left in the sandbox after the verdict.
"""

from __future__ import annotations

import ast
import io
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from minimodel._fileio import atomic_write_bytes, atomic_write_json, atomic_write_text
from minimodel.lab.exercises import isolation
from minimodel.lab.exercises.cases import Case
from minimodel.lab.subprocess_runner import clean_env, run_child
from minimodel.lab.pyparse import parse_python

MIB = 1024**2
FSIZE_LIMIT = 256 * MIB       # caps files the solution writes (its prints: run_child keeps a tail)
CHILD_FILES = ("_child.py", "_child_guard.py")
FORBIDDEN_EXIT = 86           # _child.py ends with this after reporting a violation
HERE = Path(__file__).resolve().parent


@dataclass
class ChildRun:
    """What came back from one run of the child."""

    events: list[dict[str, Any]]
    outputs: dict[int, list[np.ndarray]]
    returncode: int | None
    timed_out: bool
    duration: float
    stderr_tail: list[str] = field(default_factory=list)
    hung_at: list[str] = field(default_factory=list)
    isolation: dict[str, str] = field(default_factory=dict)
    out_of_memory: bool = False


def _uses_torch(source: str) -> bool:
    """Does the file import torch (statically)? Then the harness imports it first, so torch's
    own start-up is not mistaken for the solution's doing. (Limits never depend on this.)"""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch"
                                                for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            return True
    return False


class _Channel:
    """The pipe the child reports on: events as JSON lines, read in a thread."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.events: list[dict[str, Any]] = []
        self.cases_done = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with os.fdopen(self.read_fd, "r", encoding="utf-8", errors="replace") as pipe:
            for line in pipe:
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a kill
                if isinstance(event, dict):
                    self.events.append(event)
                    self.cases_done += event.get("event") == "case"

    def child_started(self) -> None:
        os.close(self.write_fd)  # only the child holds the write end now

    def finish(self) -> list[dict[str, Any]]:
        self._thread.join(timeout=5)
        return self.events


def _hung_at(stderr: str, shown_as: str) -> list[str]:
    """Frames of the faulthandler dump that point into the solution, innermost first (the
    solution is compiled under the learner's own path, ``shown_as``)."""
    pattern = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
    frames = [m for m in pattern.finditer(stderr) if m.group(1) == shown_as]
    return [f"{shown_as}, line {m.group(2)} in {m.group(3)}" for m in frames]


def run_solution(source: str, shown_as: str, function: str, cases: list[Case], n_outputs: int,
                 forbidden: list[str], timeout: float,
                 progress: Callable[[int, int, float, float], None] | None = None, *,
                 allowed_modules: list[str] | None = None, forbidden_ops: list[str] = (),
                 memory_mb: int = 2048) -> ChildRun:
    """Run ``function`` from ``source`` on every case in a fenced-in child process.

    Args:
        source: the learner's file content (copied into the scratch folder as ``solution.py``).
        shown_as: the learner's path, used in reports instead of the scratch copy's.
        function: name of the function to call.
        cases: inputs; array arguments go through ``.npz``, scalars through JSON.
        n_outputs: how many outputs the function returns (a tuple when > 1).
        forbidden: dotted names the attribute guard refuses (by name and by identity).
        timeout: wall-clock seconds for the whole run (start-up included).
        progress: optional ``progress(cases_done, cases_total, elapsed_s, timeout_s)``.
        allowed_modules: top-level modules the solution may import (default: see judge).
        forbidden_ops: torch ``aten`` operators refused at the dispatcher.
        memory_mb: memory limit of the exercise (cgroup where available, else address space).
    """
    iso = isolation.probe()
    scratch = Path(tempfile.mkdtemp(prefix="minimodel-judge-"))
    os.chmod(scratch, 0o755)
    channel = _Channel()
    cgroup = None
    try:
        solution = scratch / "solution.py"
        atomic_write_text(solution, source)
        for name in CHILD_FILES:
            atomic_write_bytes(scratch / name, (HERE / name).read_bytes())
        manifest = []
        for i, case in enumerate(cases):
            arrays = {k: v for k, v in case.args.items() if isinstance(v, np.ndarray)}
            scalars = {k: v for k, v in case.args.items() if not isinstance(v, np.ndarray)}
            inputs = scratch / f"in_{i:03d}.npz"
            buffer = io.BytesIO()
            np.savez(buffer, **arrays)
            atomic_write_bytes(inputs, buffer.getvalue())
            manifest.append({"inputs": str(inputs), "outputs": str(scratch / f"out_{i:03d}.npz"),
                             "scalars": scalars, "order": list(case.args)})
        margin = min(1.0, 0.25 * timeout)
        config = {"solution": str(solution), "shown_as": shown_as, "function": function,
                  "forbidden": forbidden, "forbidden_ops": list(forbidden_ops),
                  "forbidden_modules": ["minimodel"],
                  "allowed_modules": list(allowed_modules or ()),
                  "hidden_roots": [str(isolation.PACKAGE_DIR)], "scratch": str(scratch),
                  "guard": str(scratch / "_child_guard.py"), "channel_fd": channel.write_fd,
                  "preimport_torch": _uses_torch(source), "cases": manifest,
                  "n_outputs": n_outputs, "dump_after": max(0.1, timeout - margin)}
        atomic_write_json(scratch / "config.json", config)

        memory = memory_mb * MIB
        if iso.cgroup is not None:
            cgroup = iso.cgroup.start(isolation.MAX_PROCESSES, memory)
        nproc = None
        if cgroup is None and os.name == "posix" and os.geteuid() != 0:
            nproc = isolation.processes_of_user(os.geteuid()) + isolation.MAX_PROCESSES
        preexec = None
        if isolation.resource is not None:
            # Address space: generous when a cgroup caps real memory (torch maps large
            # virtual regions); the exercise's memory otherwise. Never from the source's words.
            address = max(4096 * MIB, 2 * memory) if cgroup else max(memory, 1024 * MIB)
            preexec = isolation.resource_limits(math.ceil(timeout) + 2, address, FSIZE_LIMIT,
                                                cgroup, nproc)
        env = clean_env(HOME=str(scratch), TMPDIR=str(scratch))
        argv = isolation.sandbox_command(iso, [sys.executable, "-I", str(scratch / "_child.py"),
                                               str(scratch / "config.json")], scratch, env)
        watch = None
        if progress is not None:
            def watch(elapsed: float) -> None:
                progress(channel.cases_done, len(cases), elapsed, timeout)
        done = run_child(argv, cwd=scratch, env=env, timeout=timeout, poll=watch,
                         preexec=preexec, pass_fds=(channel.write_fd,),
                         on_start=channel.child_started)
        out_of_memory = cgroup.oom_killed() if cgroup is not None else False
        if cgroup is not None:
            cgroup.close()  # kills anything still alive in the sandbox
            cgroup = None
        events = channel.finish()
        outputs = {}
        for ev in events:
            if ev.get("event") == "case" and ev.get("ok"):
                path = Path(manifest[ev["index"]]["outputs"])
                try:
                    with np.load(path, allow_pickle=False) as data:
                        outputs[ev["index"]] = [data[f"out_{j}"] for j in range(ev["n"])]
                except (OSError, ValueError, KeyError) as exc:
                    ev.update(ok=False, type=type(exc).__name__,
                              message=f"unreadable output file: {exc}", where=[])
        # SIGXCPU means the CPU limit fired before the wall clock: a timeout as well.
        timed_out = done.timed_out or done.returncode == -signal.SIGXCPU
        return ChildRun(events, outputs, done.returncode, timed_out, done.seconds,
                        done.stderr_tail(12), _hung_at(done.stderr, shown_as),
                        iso.as_dict(), out_of_memory)
    finally:
        if cgroup is not None:
            cgroup.close()
        shutil.rmtree(scratch, ignore_errors=True)
