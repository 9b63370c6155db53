"""Run a learner's solution in a separate, fenced-in process and bring back plain arrays.

Why a process and not ``exec``: a solution may loop forever, eat memory, print gigabytes, call
``sys.exit`` or try to get out; none of that may touch the judge, the package, the learner's
files or the lab's progress. The fence is the operating system's
(:mod:`minimodel.lab.exercises.isolation`): nothing in the child process is trusted.

The child is ``python -I -B _child.py config.json`` in a fresh scratch folder (``-B``: it
never writes ``__pycache__``), with a scrubbed environment and CPU time, memory, file-size and
process-count limits that come from the exercise (never from the solution's text). Inputs
travel as ``.npz`` files the judge wrote; events and outputs come back through one inherited
pipe of bounded, typed frames (:mod:`minimodel.lab.exercises.channel`): the judge reads no
file the child could have written. Its stdout and stderr are kept to a tail of
``STREAM_BYTES`` each. The wall-clock limit starts when the child says ``ready`` (after its
NumPy and torch imports), so a busy machine's slow torch import is not charged to the solution.
Afterwards no process the child started is left (:mod:`minimodel.lab.exercises.reaper`) and
the scratch folder is removed even if the solution took its permissions away.
"""

from __future__ import annotations

import ast
import io
import math
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from minimodel._fileio import atomic_write_bytes, atomic_write_json, atomic_write_text
from minimodel.lab.exercises import isolation, reaper
from minimodel.lab.exercises.cases import Case
from minimodel.lab.exercises.channel import Channel, printable
from minimodel.lab.pyparse import parse_python
from minimodel.lab.subprocess_runner import clean_env, run_child

MIB = 1024**2
FSIZE_LIMIT = 256 * MIB  # caps files the solution writes (its prints: run_child keeps a tail)
STARTUP_LIMIT = 300.0    # seconds for the harness's own imports (torch), before the clock
STREAM_BYTES = 256 * 1024  # the tail of the child's stdout and of its stderr that is kept
HERE = Path(__file__).resolve().parent
CHILD_FILES = ("_child.py", "_enforce.py", "family.py")  # the harness, copied into the scratch


@dataclass
class ChildRun:
    """What came back from one run of the child."""

    events: list[dict[str, Any]]
    outputs: dict[int, list[np.ndarray]]
    returncode: int | None
    timed_out: bool
    duration: float  # seconds since "ready" (the solution's own time)
    stderr_tail: list[str] = field(default_factory=list)
    hung_at: list[str] = field(default_factory=list)
    isolation: dict[str, str] = field(default_factory=dict)
    out_of_memory: bool = False
    started: bool = True  # the harness reached "ready" (else the sandbox itself failed)
    channel_problem: str | None = None  # what was wrong with the child's reports, if anything


def imports_torch(source: str) -> bool:
    """Does the file import torch (statically)? Then the harness imports it before the clock
    starts. (Limits never depend on this.)"""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch"
                                                    for a in node.names)
               or isinstance(node, ast.ImportFrom)
               and (node.module or "").split(".")[0] == "torch" for node in ast.walk(tree))


def _hung_at(stderr: str, shown_as: str) -> list[str]:
    """Frames of the faulthandler dump that point into the solution, innermost first (the
    solution is compiled under the learner's own path, ``shown_as``)."""
    pattern = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
    return [f"{shown_as}, line {m.group(2)} in {m.group(3)}" for m in pattern.finditer(stderr)
            if m.group(1) == shown_as]


def remove_tree(path: Path) -> None:
    """Remove the run's scratch folder whatever the solution left in it (partial isolation:
    it could write there): folders it made read-only or unreadable (each is given
    ``u+rwx`` before it is read), symbolic links (removed, never followed) and trees of any
    depth. Nothing recurses: each folder's subfolders are first moved up to ``path`` itself
    and emptied from there, so a tree 100,000 folders deep neither overflows Python's stack
    nor makes a path longer than the system allows (``shutil.rmtree`` recurses, and so did
    this function: a solution's 1,200 nested folders made the check raise RecursionError and
    left the folder behind)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
    if not path.is_dir() or path.is_symlink():
        return
    if not {os.open, os.chmod, os.rename, os.unlink, os.rmdir} <= os.supports_dir_fd \
            or os.scandir not in os.supports_fd:
        shutil.rmtree(path, ignore_errors=True)  # pragma: no cover - not POSIX
        return
    try:
        os.chmod(path, stat.S_IRWXU)
        top = os.open(path, flags)
    except OSError:
        return
    hoisted = 0
    try:
        todo = True
        while todo:  # each round empties the folders at the top; their subfolders move up
            todo = False
            with os.scandir(top) as entries:
                names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
            for name, is_dir in names:
                try:
                    if not is_dir:
                        os.unlink(name, dir_fd=top)
                        continue
                    os.chmod(name, stat.S_IRWXU, dir_fd=top)  # a real folder (lstat above)
                    fd = os.open(name, flags, dir_fd=top)
                except OSError:
                    continue
                try:
                    with os.scandir(fd) as entries:
                        inner = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
                    for sub, sub_is_dir in inner:
                        try:
                            if sub_is_dir:  # moving a folder rewrites its "..": it needs u+w
                                os.chmod(sub, stat.S_IRWXU, dir_fd=fd)
                                hoisted += 1  # a new name each time, even after a failure
                                os.rename(sub, f".up-{hoisted}", src_dir_fd=fd,
                                          dst_dir_fd=top)
                                todo = True
                            else:
                                os.unlink(sub, dir_fd=fd)
                        except OSError:
                            pass
                finally:
                    os.close(fd)
                try:
                    os.rmdir(name, dir_fd=top)
                except OSError:
                    pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except OSError:
        shutil.rmtree(path, ignore_errors=True)


def run_solution(source: str, shown_as: str, function: str, cases: list[Case],
                 wants: list[list[np.ndarray]], timeout: float,
                 progress: Callable[[int, int, float, float], None] | None = None,
                 *, memory_mb: int = 2048, hide_torch: bool = False,
                 runtime_rule: dict[str, Any] | None = None) -> ChildRun:
    """Run ``function`` from ``source`` on every case in a fenced-in child process.

    Args:
        source: the learner's file content (copied into the scratch folder).
        shown_as: the learner's path, used in reports instead of the scratch copy's.
        function: name of the function to call.
        cases: inputs; array arguments go through ``.npz``, scalars through JSON.
        wants: per case, the reference's outputs: the child's outputs must come back with
            their shapes and dtypes (or as a header alone) and take no more bytes.
        timeout: wall-clock seconds for the solution (from "ready" to the end).
        progress: optional ``progress(cases_done, cases_total, elapsed_s, timeout_s)``.
        memory_mb: memory limit of the exercise (cgroup where available, else address space).
        hide_torch: a NumPy-only exercise: torch cannot be imported (full isolation only).
        runtime_rule: ``{"entries": [...], "refused": [...]}``, the forbidden APIs the child
            replaces by stubs before the solution runs (``_enforce.py``); none when None.
    """
    iso = isolation.probe()
    scratch = Path(tempfile.mkdtemp(prefix="minimodel-run-"))
    os.chmod(scratch, 0o755)
    (scratch / "out").mkdir()  # HOME and TMPDIR without bubblewrap
    channel = Channel(wants)
    cgroup = None
    spare = reaper.children_now()
    pids: list[int] = []  # our child, once started
    if not iso.bwrap:
        reaper.become_subreaper()  # a setsid() grandchild comes back to us, to be killed
        reaper.seal(True)  # no /proc/<judge>/fd, mem or ptrace for the solution
    try:
        atomic_write_text(scratch / "solution.py", source)
        for helper in CHILD_FILES:
            atomic_write_bytes(scratch / helper, (HERE / helper).read_bytes())
        atomic_write_text(scratch / "torch_hidden.py", isolation.TORCH_HIDDEN)
        manifest = []
        for i, case in enumerate(cases):
            arrays = {k: v for k, v in case.args.items() if isinstance(v, np.ndarray)}
            scalars = {k: v for k, v in case.args.items() if not isinstance(v, np.ndarray)}
            buffer = io.BytesIO()
            np.savez(buffer, **arrays)
            atomic_write_bytes(scratch / f"in_{i:03d}.npz", buffer.getvalue())
            manifest.append({"inputs": str(scratch / f"in_{i:03d}.npz"),
                             "expect": [[list(w.shape), w.dtype.str] for w in wants[i]],
                             "scalars": scalars,
                             "order": [k for k in case.args if k not in case.keywords],
                             "keywords": list(case.keywords)})
        config = {"solution": str(scratch / "solution.py"), "shown_as": shown_as,
                  "function": function, "channel_fd": channel.write_fd,
                  "preimport_torch": imports_torch(source), "cases": manifest,
                  "runtime_rule": runtime_rule or {"entries": [], "refused": []},
                  "n_outputs": len(wants[0]) if wants else 1,
                  "dump_after": max(0.1, timeout - min(1.0, 0.25 * timeout))}
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
            cpu = math.ceil(timeout + STARTUP_LIMIT)  # the wall clock is the real limit
            preexec = isolation.resource_limits(cpu, address, FSIZE_LIMIT, cgroup, nproc)
        home = "/tmp" if iso.bwrap else str(scratch / "out")
        env = clean_env(keep=(), HOME=home, TMPDIR=home, PYTHONDONTWRITEBYTECODE="1")
        env.pop("PATH", None)  # the solution has no business running programs
        argv = isolation.sandbox_command(
            iso, [sys.executable, "-I", "-B", str(scratch / "_child.py"),
                  str(scratch / "config.json")], scratch, env, hide_torch=hide_torch)
        watch = None
        if progress is not None:
            def watch(elapsed: float) -> None:
                progress(channel.cases_done, len(cases), elapsed, timeout)
        done = run_child(argv, cwd=scratch, env=env, timeout=timeout, poll=watch,
                         preexec=preexec, pass_fds=(channel.write_fd,),
                         on_start=channel.child_started, max_chars=STREAM_BYTES,
                         on_pid=lambda pid: (pids.append(pid), reaper.started(pid)),
                         spawn_lock=reaper.LOCK,
                         clock_start=lambda: channel.ready_at, startup_timeout=STARTUP_LIMIT)
        reaper.finished(pids[0] if pids else None)
        reaper.kill_descendants(spare)  # whatever left the process group
        out_of_memory = cgroup.oom_killed() if cgroup is not None else False
        channel.finish()
        # SIGXCPU means the CPU limit fired before the wall clock: a timeout as well.
        timed_out = done.timed_out or done.returncode == -signal.SIGXCPU
        ran = time.monotonic() - channel.ready_at if channel.ready_at else 0.0
        return ChildRun(channel.events, channel.outputs, done.returncode, timed_out,
                        min(ran, done.seconds), printable(done.stderr_tail(12)),
                        printable(_hung_at(done.stderr, shown_as)), iso.as_dict(),
                        out_of_memory,
                        started=channel.ready_at is not None,
                        channel_problem=channel.problem)
    finally:
        if cgroup is not None:
            cgroup.close()  # kills anything still alive in the sandbox, removes the cgroup
        reaper.finished(pids[0] if pids else None)
        reaper.kill_descendants(spare)
        if not iso.bwrap:
            reaper.seal(False)
        remove_tree(scratch)
